// SPDX-License-Identifier: MIT
// What `ddl sweep` reads before it runs a trial: the job and its snapshot
// (a new sweep's file, or --resume's journal), the ranks per trial, each
// slot's GPUs, the trials already finished, and the sweep's exit code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/sweep/journal.hpp"
#include "src/sweep/packer.hpp"
#include "src/sweep/runner.hpp"
#include "src/sweep/trial_contract.hpp"
#include "src/util/json.hpp"

namespace ddl::sweep {

// The job a sweep runs, and its snapshot that every trial gets.
struct SweepJob {
  JobSnapshot snapshot;
  JobSpec job;
};

// A new sweep: `job_file` as it is now. --resume DIR (`journal` read from
// `resume_dir`): the journal's snapshot, so that the rest runs as the sweep
// began; a job file or trial options given again must be the same.
Result<SweepJob> read_sweep_job(const std::string& resume_dir, const std::string& job_file,
                                const Overrides& overrides, const std::optional<JournalState>& journal);

// Ranks per trial: --np N, else sweep.np, else [launch] np, else 1. Both
// keys with different values, or a range, are refused: either would
// otherwise be dropped without a word.
Result<int> trial_np(const JobSpec& job, const Overrides& overrides);

// Per host and slot, the GPUs of a trial rank holding that slot: those
// `ddl run` binds to that slot's rank on the sweep's hosts (src/plan).
SlotGpus slot_gpus(JobSpec job, const Inventory& hosts);

// ddl-sweeps/NAME-TIME (UTC), with -2, -3... when it is taken.
std::string default_sweep_dir(const JobSpec& job);

// The journal's first record: the sweep, its trials and the job's snapshot.
Json sweep_record(const SweepJob& sweep_job, const std::vector<Trial>& trials);

// --resume: the journal's trials must be the job's; finished ones are kept.
Result<std::vector<TrialOutcome>> resumed_outcomes(const std::string& dir, const std::vector<Trial>& trials,
                                                   const JournalState& state);

// The sweep's folder, and the trial folders already in it (a resume's) that
// are to run again, checked before anything is written there.
Result<void> own_sweep_folders(const std::string& dir, const std::vector<int>& todo);

// 128 + the signal that stopped the sweep, 1 when a trial did not end ok, else 0.
int sweep_exit_code(const SweepOutcome& outcome);

} // namespace ddl::sweep
