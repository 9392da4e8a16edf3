// SPDX-License-Identifier: MIT
// `ddl sweep`'s glue below the command line: its hosts through the job's
// backend and the host pipeline, the ports trials would share, the
// scheduler's configuration (src/sweep/runner.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/sweep/journal.hpp"
#include "src/sweep/packer.hpp"
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

// What `ddl sweep` was asked: a new sweep's job file and folder, or the
// folder of one to resume; `progress` and `quiet` as make_sweep_config takes.
struct SweepRequest {
  std::string job_file;
  std::string dir;     // "" : ddl-sweeps/NAME-TIME
  std::string resume;  // "" : a new sweep
  Overrides overrides;
  bool progress = false;
  bool quiet = false;
};

// A sweep read, checked and placed: what --dry-run lists and a run starts.
struct PreparedSweep {
  sweep::SweepJob job;
  SweepHosts hosts;
  sweep::SlotPool pool;
  std::string dir;  // absolute
  sweep::SweepConfig config;
  std::vector<sweep::Trial> trials;
  std::vector<sweep::TrialOutcome> outcomes;  // a resume's finished ones kept
  std::vector<int> todo;                      // the trials to run
  std::optional<sweep::JournalState> journal;  // --resume's
};

Result<PreparedSweep> prepare_sweep(const SweepRequest& request);

// The sweep's folders checked, its journal opened and its first record
// written ("sweep", or "resumed").
Result<sweep::Journal> open_sweep_journal(const PreparedSweep& prepared);

} // namespace ddl::session
