// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "src/util/error.hpp"

namespace ddl::pmix {

// The folder of one host's PMIx server: the library's rendezvous and
// shared-memory files (PMIX_SERVER_TMPDIR) and the ranks' session files
// (PMIX_TMPDIR, PMIX_NSDIR). Made with mkdtemp under $TMPDIR (else /tmp) and
// named after the host, so it is this host's alone even where hosts share
// /tmp; removed, with everything in it, when destroyed.
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

private:
  void remove();
  std::string path_;
  std::string nsdir_;
};

} // namespace ddl::pmix
