// SPDX-License-Identifier: MIT
// `ddl sweep`'s glue below the command line: its hosts through the job's
// backend and the host pipeline, the ports trials would share, the
// scheduler's configuration (src/sweep/runner.hpp).
#pragma once

#include <string>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/sweep/runner.hpp"
#include "src/sweep/sweep_job.hpp"
#include "src/util/error.hpp"

namespace ddl::session {

// The sweep's hosts, through its backend and the host pipeline (as `ddl run`
// finds them: --include / --exclude, addresses, GPU probe).
struct SweepHosts {
  std::string backend;
  bool shares_broker = false;  // the trials reach the hosts through the sweep's broker
  Inventory hosts;
};

Result<SweepHosts> sweep_hosts(const JobSpec& job);

// Ports that a job file fixes would be shared by trials that run at once.
Result<void> check_fixed_ports(const JobSpec& job, int most_at_once);

// What the scheduler runs: `progress`, one status line on stderr; `quiet`,
// no per-trial lines.
sweep::SweepConfig make_sweep_config(const sweep::SweepJob& sweep_job, const SweepHosts& hosts,
                                     const std::string& dir, int np, bool progress, bool quiet);

} // namespace ddl::session
