// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "src/util/error.hpp"

namespace ddl::pmix {

// The folder of one host's PMIx server: the library's rendezvous and
// shared-memory files (PMIX_SERVER_TMPDIR) and the ranks' session files
// (PMIX_TMPDIR, PMIX_NSDIR). Made with mkdtemp under $TMPDIR (else /tmp) and
// named after the host, so it is this host's alone even where hosts share
// /tmp; removed, with everything in it, when destroyed. Beside it, the ranks'
// shared-memory folder: Open MPI 4.1 names its segments after the machine's
// hostname, job and local rank (/dev/shm/vader_segment.HOST.JOB.LOCAL), so two
// hosts of one job on one machine would map each other's segments unless each
// host has a folder of its own; ddl's removal also takes the segments a
// crashed rank leaves. However this process ends (SIGKILL with its job's
// process group included), a remover in a session of its own removes both
// folders once it has gone: it waits for EOF on a pipe only this process
// writes to.
class SessionDir {
public:
  // ExitCode::launch when the folder cannot be made.
  static Result<SessionDir> create(const std::string& host);

  SessionDir() = default;
  SessionDir(SessionDir&& other) noexcept;
  SessionDir& operator=(SessionDir&& other) noexcept;
  ~SessionDir();

  const std::string& path() const { return path_; }
  // The namespace's own folder inside it (PMIX_NSDIR).
  const std::string& nsdir() const { return nsdir_; }
  // The ranks' shared-memory folder: under /dev/shm where this user may
  // write there, else inside path().
  const std::string& shm() const { return shm_; }

private:
  void remove();
  void start_remover();
  std::string path_;
  std::string nsdir_;
  std::string shm_;
  int remover_fd_ = -1;  // its stdin: closed, it removes what is left and ends
  int remover_pid_ = -1;
};

} // namespace ddl::pmix
