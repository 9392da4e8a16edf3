// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <sys/resource.h>
#include <sys/types.h>

#include "src/launch/backend.hpp"
#include "src/util/error.hpp"

namespace ddl {

// A started rank: its process (the leader of its own session and process
// group) and the read ends of its stdout and stderr pipes (non-blocking).
struct SpawnedRank {
  pid_t pid = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int stdin_fd = -1;  // the write end of its stdin pipe when it reads ddl's (reads_stdin)
};

// Finds the program to execute: a word with '/' is taken relative to the
// workdir; a bare name is looked up in the rank's PATH (else the launcher's).
// Errors are launch errors that name the rank's host and the command.
Result<std::string> resolve_program(const RankLaunch& launch);

// Forks and executes one rank: new session, PR_SET_PDEATHSIG(SIGKILL),
// stdin from /dev/null (a pipe when it reads ddl's), stdout/stderr to pipes, no other descriptor, exactly
// `launch.env`, `launch.workdir`, default signal actions, `nofile_soft` as
// its RLIMIT_NOFILE soft limit, pinned to `launch.cpus` when there are any.
// Returns once the program is executing (or failed to: chdir and exec errors
// come back as launch errors). Call it from a thread that lives as long as
// the rank: PDEATHSIG fires when the thread that forked exits.
Result<SpawnedRank> spawn_rank(const RankLaunch& launch, const std::string& program, rlim_t nofile_soft);

} // namespace ddl
