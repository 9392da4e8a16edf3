// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/launcher_backend.hpp"

namespace ddl::slurm {

// Splits srun --label streams ("  R: line") back into each rank's output.
// srun buffers each task's output by line, so every line carries its task's
// label. Unlabeled lines are srun's own (launcher_text(), for the failure
// report). The rank script's markers (srun_command.hpp) are taken out.
class LabeledOutput final : public LauncherOutput {
public:
  // `on_step` hears "JOB.STEP" once rank 0 has said it (may be empty).
  LabeledOutput(int world_size, Sink sink, std::function<void(const std::string&)> on_step = {})
      : LauncherOutput(std::move(sink)), world_size_(world_size), on_step_(std::move(on_step)),
        seen_ended_(static_cast<std::size_t>(world_size), false) {}

  void feed(Stream stream, std::string_view bytes) override;
  void finish() override;
  // The first own failure; else a task srun could not launch (that rank,
  // or the node's first, as a launch error: exit 3); else Slurm ending the
  // step (a failed node: its first rank, exit 3 as for a lost ssh host;
  // scancel, the time limit, preemption: rank 0, 143); else the first
  // failure (143).
  std::optional<Blame> blame(const RankExit& whole, std::span<const RankLaunch> launches) const override;
  // The ranks whose end was seen since the last call, each once, with its
  // exit code: from their markers, or from srun's "task R: Exited with exit
  // code C" when a marker was lost.
  std::vector<std::pair<int, int>> take_ended() override;
  // 143 after Slurm said it cancelled the step was Slurm's stop, not the
  // rank's failure (RankExit::stopped_by), unless srun had failed to launch
  // a task (the cancel was then srun's own); codes above 128 are signals.
  RankExit exit_of_code(int code) const override;

  // The rank whose command failed first, and its exit code: the first
  // marker, except that a rank ended by the step's own SIGTERM (143; a
  // SIGKILL once Slurm cancelled the step or srun failed to launch a task
  // counts as that SIGTERM: the step's teardown) gives
  // way to a later one that failed on its own, to Open MPI's "MPI_ABORT was
  // invoked on rank R ... with errorcode C" (Slurm's PMIx cancels the step
  // on MPI_Abort, and may kill the aborting rank's script before its
  // marker), or to srun's "task R: Exited with exit code C" when that rank's
  // marker was lost with the step.
  std::optional<std::pair<int, int>> first_failure() const;
  // "JOB.STEP" once rank 0 has said it.
  std::optional<std::string> step() const { return step_; }
  // The node of srun's "Node failure on NODE", if it said so.
  const std::optional<std::string>& failed_node() const { return failed_node_; }
  // slurmstepd's "STEP J.S ON NODE CANCELLED AT T ..." (scancel, the time
  // limit, preemption), if it said so.
  const std::optional<std::string>& cancelled() const { return cancelled_; }

private:
  void line(Stream stream, std::string_view text);
  bool marker(std::string_view text);
  void srun_says(std::string_view text);
  void launch_failure_says(std::string_view text);
  std::optional<Blame> launch_blame(std::span<const RankLaunch> launches) const;
  void stepd_says(std::string_view text);
  void mpi_abort_says(int rank, std::string_view text);
  void ended(int rank, int code);

  int world_size_;
  std::function<void(const std::string&)> on_step_;
  std::string pending_[2];
  std::optional<std::pair<int, int>> first_;
  std::optional<std::pair<int, int>> first_own_;
  std::optional<std::pair<int, int>> srun_reported_;
  std::optional<int> abort_begun_by_;             // the rank whose "MPI_ABORT was invoked" came last
  std::optional<std::pair<int, int>> mpi_abort_;  // the first rank's MPI_Abort and its code
  std::vector<std::pair<int, int>> ended_;
  std::vector<bool> seen_ended_;
  std::optional<std::string> step_;
  std::optional<std::string> failed_node_;
  std::optional<std::string> cancelled_;
  // srun's first "task R launch failed: WHY" or "Task launch for StepId=S
  // failed on node N: WHY": what it said, and the rank or the node.
  struct LaunchFailure {
    std::string said;
    std::optional<int> rank;
    std::string node;
  };
  std::optional<LaunchFailure> launch_failed_;
};

} // namespace ddl::slurm
