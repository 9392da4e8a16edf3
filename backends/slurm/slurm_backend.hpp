// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/launcher_backend.hpp"

namespace ddl::slurm {

// The whole gang as one `srun` job step inside the Slurm allocation ddl runs
// in (see srun_command.hpp); srun places rank r on the plan's host for r
// (--distribution=arbitrary) and ends every task when one fails
// (--kill-on-bad-exit). The first rank to fail and its code come from the
// rank script's marker, reported as it arrives, so the gang ends with that
// rank's code, not srun's 143. Signals reach the tasks through
// `scancel --signal SIG JOB.STEP` (srun itself does not forward a single
// SIGINT); restarts are new steps. Outside
// an allocation there is nothing to launch into: the registry refuses the
// backend (ExitCode::usage) before any of this.
struct SlurmOptions {
  std::vector<std::string> srun_args;  // [slurm] srun_args
};

class SlurmBackend final : public LauncherBackend {
public:
  explicit SlurmBackend(SlurmOptions options);
  ~SlurmBackend() override;

  std::string_view name() const override { return "slurm"; }
  // srun --mpi=pmix: slurmstepd is the ranks' PMIx server.
  bool serves_pmix() const override { return true; }

protected:
  // srun on PATH (looked for, not run: srun reads slurm.conf even for --version).
  Result<void> find_launcher(const Plan& plan) override;
  // Writes SLURM_HOSTFILE for these launches.
  Result<LauncherCommand> command(std::span<const RankLaunch> launches, bool dry_run) override;
  std::unique_ptr<LauncherOutput> parse_output(int world_size, LauncherOutput::Sink sink) override;
  // scancel --signal SIG JOB.STEP; before the step is known, srun's own TERM.
  void deliver(int signo) override;

private:
  bool signal_step(int signo);

  SlurmOptions options_;
  std::mutex step_mutex_;
  std::optional<std::string> step_;  // "JOB.STEP" once rank 0 said it
};

} // namespace ddl::slurm
