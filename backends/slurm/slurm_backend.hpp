// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/child_process.hpp"
#include "src/launch/backend.hpp"

namespace ddl::slurm {

// The whole gang as one `srun` job step inside the Slurm allocation ddl runs
// in (see srun_command.hpp). ddl collects the rank launches and starts srun
// with the last one; srun places rank r on the plan's host for r
// (--distribution=arbitrary) and ends every task when one fails
// (--kill-on-bad-exit). The first rank to fail and its code come from the
// rank script's marker, reported as it arrives, so the gang ends with that
// rank's code, not srun's 143. Signals reach the tasks through `scancel --signal SIG JOB.STEP` (srun
// itself does not forward a single SIGINT); restarts are new steps. Outside
// an allocation there is nothing to launch into: the registry refuses the
// backend (ExitCode::usage) before any of this.
struct SlurmOptions {
  std::vector<std::string> srun_args;  // [slurm] srun_args
};

class SlurmBackend final : public Backend {
public:
  explicit SlurmBackend(SlurmOptions options);
  ~SlurmBackend() override;

  std::string_view name() const override { return "slurm"; }
  std::string dry_run_text(std::span<const RankLaunch> launches) const override;

  Result<void> prepare(const Plan& plan, std::span<const RankLaunch> launches) override;
  Result<void> start(const RankLaunch& launch, RankEvents& events) override;
  void signal(int rank, int signo) override;
  void shutdown() override;

private:
  void run_srun(std::vector<std::string> argv, EnvList env, RankEvents& events);
  void report_exits(int status, const class LabeledOutput& output, RankEvents& events);
  bool report_slurm_ended_step(const class LabeledOutput& output, RankEvents& events);
  void report_exit(int rank, RankExit how, RankEvents& events);
  bool signal_step(int signo);

  SlurmOptions options_;
  std::string dir_;
  std::string hostfile_;
  int world_size_ = 0;

  std::vector<RankLaunch> launches_;
  GangChild gang_;  // its mutex also guards launches_ (and step_)
  std::optional<std::string> step_;  // "JOB.STEP" once rank 0 said it
  bool step_ready_ = false;          // runner thread only
  std::vector<bool> reported_;       // runner thread only: ranks whose exit was reported
};

} // namespace ddl::slurm
