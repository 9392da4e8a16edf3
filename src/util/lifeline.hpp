// SPDX-License-Identifier: MIT
#pragma once

#include <sys/types.h>

#include "src/util/error.hpp"

namespace ddl {

// A small watcher process, forked once, that outlives ddl by an instant: it
// holds the read end of a pipe whose only writer is ddl, and when that pipe
// reaches EOF (ddl exited, even by SIGKILL) it SIGKILLs every process group
// it was told about. PR_SET_PDEATHSIG covers a rank's first process; this
// covers its children and grandchildren in the group.
class Lifeline {
public:
  Lifeline() = default;
  ~Lifeline();
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;

  // Forks the watcher (call before starting ranks).
  Result<void> start();
  void watch(pid_t process_group);
  void forget(pid_t process_group);
  // Closes the pipe and reaps the watcher. Idempotent.
  void stop();

private:
  void send(int op, pid_t process_group);
  int write_fd_ = -1;
  pid_t watcher_ = -1;
};

} // namespace ddl
