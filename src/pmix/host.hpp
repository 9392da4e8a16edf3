// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "src/pmix/fence_exchange.hpp"
#include "src/pmix/layout.hpp"
#include "src/util/duration.hpp"
#include "src/util/error.hpp"

namespace ddl::pmix {

// One host's share of a PMIx job: the ranks it starts and how its fences
// reach the other hosts.
struct HostRun {
  JobLayout layout;
  std::vector<std::string> argv;  // each local rank's program and arguments
  std::vector<std::string> env;   // each rank's environment ("NAME=value"; PMIX_* are the server's)
  Millis grace{10'000};           // after the stop signal, SIGKILL
  Allgather allgather;            // fences across hosts; empty for a job of one host
  bool rank_prefix = false;       // each output line starts "[RANK] " (the job's rank)
};

// How the host ended: its exit code (HostOutcome's rules) and, when not 0,
// the first failure in words.
struct HostResult {
  int code = 0;
  std::string reason;
  bool told_to_stop = false;  // the first failure was this worker's own stop (ddl's SIGTERM, its timeout)
};

// Hosts this host's PMIx server, starts its ranks (fork/exec, each in a
// process group of its own, with the server's launch environment and
// rank_identity_env), forwards
// their stdout and stderr to ours line by line, and waits for all of them.
// The first failure (HostOutcome) ends the rest: SIGTERM to each group, then
// SIGKILL after `grace`; so does a stop (stop::requested(): the caller arms
// the stop token), whose signal is forwarded instead of SIGTERM. Nothing of
// the ranks is left running when it returns, even when ddl is killed
// meanwhile (PR_SET_PDEATHSIG and a Lifeline). An error means nothing was
// started (the server or the lifeline could not start).
Result<HostResult> run_host(const HostRun& run);

} // namespace ddl::pmix
