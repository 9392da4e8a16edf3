// SPDX-License-Identifier: MIT
// Runs a sweep's trials on its slots: each trial attempt is one child
// `ddl run --trial REQUEST` (the very launch path of `ddl run`: backends,
// shim, supervisor, gang semantics, its own rendezvous, token and ports),
// told what to run by the request.json the sweep writes (the trial
// contract, trial_contract.hpp) and read back through its result.json. Trials
// start as slots free up; failures are retried elsewhere; hosts that keep
// failing are excluded; SIGINT/SIGTERM/SIGHUP are forwarded to every trial.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/job/sweep_spec.hpp"
#include "src/sweep/journal.hpp"
#include "src/sweep/packer.hpp"
#include "src/sweep/trial_contract.hpp"
#include "src/sweep/trials.hpp"

namespace ddl::sweep {

struct SweepConfig {
  std::string dir;                     // the sweep directory (absolute)
  std::string ddl;                     // the ddl binary each trial runs
  JobSnapshot job;                     // the job as the sweep read it: what every trial runs
  std::string backend;                 // as the sweep chose it
  std::vector<std::string> command;    // the job's command ({name} not yet replaced)
  bool shell = false;                  // command is one sh -c string
  int np = 1;
  int max_parallel = 0;                // 0: no limit but the slots
  int retries = 1;
  std::optional<SweepMetric> metric;
  bool progress = false;               // one progress line on stderr (a terminal)
  bool quiet = false;                  // no per-trial lines on stderr
  std::string ssh_broker;              // the session broker's socket ("" when none)
};

// How one trial ended (its last attempt).
struct TrialOutcome {
  int trial = 0;
  std::string result = "not_run";      // ok | failed | launch_error | interrupted | not_run
  int exit_code = 0;
  std::optional<double> metric;
  double seconds = 0;
  std::string hosts;
  int attempts = 0;
};

struct SweepOutcome {
  std::vector<TrialOutcome> trials;    // every trial, by index
  std::vector<std::pair<std::string, std::string>> excluded;  // host, reason
  int stop_signal = 0;                 // SIGINT/SIGTERM/SIGHUP that stopped the sweep
  double seconds = 0;
  double busy_slot_seconds = 0;        // sum over attempts of ranks x wall time
};

// Runs `todo` (the trials not finished yet) and returns every trial's
// outcome, `done` (finished before a resume) included. Errors: the journal
// cannot be written, or the sweep directory cannot be (ExitCode::launch).
Result<SweepOutcome> run_sweep(const SweepConfig& config, const std::vector<Trial>& trials,
                               const std::vector<int>& todo, std::vector<TrialOutcome> done, SlotPool& pool,
                               Journal& journal);

// "trial-0003": a trial's folder under the sweep directory.
std::string trial_folder(int trial);

// "SWEEP_DIR/trial-0003/attempt-1": the rank logs of one attempt of a trial.
std::string attempt_log_dir(const std::string& trial_dir, int attempt);

// What one attempt of `trial` on `placement` runs: its request.json.
TrialRequest trial_request(const SweepConfig& config, const SlotPool& pool, const Trial& trial,
                           const Placement& placement, int attempt);

} // namespace ddl::sweep
