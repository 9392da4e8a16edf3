// SPDX-License-Identifier: MIT
// Runs a sweep's trials on its slots: each trial attempt is one child
// `ddl run` (the very launch path of `ddl run`: backends, shim, supervisor,
// gang semantics, its own rendezvous, token and ports), started on the
// trial's placement with its parameters in the env and the command. Trials
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
#include "src/sweep/trials.hpp"

namespace ddl::sweep {

struct SweepConfig {
  std::string dir;                     // the sweep directory (absolute)
  std::string ddl;                     // the ddl binary each trial runs
  std::vector<std::string> run_args;   // after "ddl run", before the trial's own (job, --backend, -x, ...)
  std::vector<std::string> command;    // the job's command ({name} not yet replaced)
  bool shell = false;                  // command is one sh -c string
  int np = 1;
  int max_parallel = 0;                // 0: no limit but the slots
  int retries = 1;
  int rank_restarts = 0;               // job.max_restarts: the attempts of each trial's `ddl run`
  std::optional<SweepMetric> metric;
  // Per pool host and slot: CUDA_VISIBLE_DEVICES for a trial holding that
  // slot ("" none); empty when the job does not bind GPUs.
  std::vector<std::vector<std::string>> slot_gpus;
  bool progress = false;               // one progress line on stderr (a terminal)
  bool quiet = false;                  // no per-trial lines on stderr
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

// The argv of one trial's `ddl run` (after the binary): `config.run_args`,
// the placement's hosts and ranks, its log folder, its env, the command
// with its parameters.
std::vector<std::string> trial_run_args(const SweepConfig& config, const SlotPool& pool, const Trial& trial,
                                        const Placement& placement, int attempt);

} // namespace ddl::sweep
