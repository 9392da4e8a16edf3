// SPDX-License-Identifier: MIT
#include "backends/slurm/srun_output.hpp"

#include <csignal>
#include <utility>

#include <fmt/core.h>

#include "backends/slurm/srun_command.hpp"
#include "src/util/text.hpp"

namespace ddl::slurm {

namespace {

// "  12: text" -> {12, "text"}; nullopt when the line has no label.
std::optional<std::pair<int, std::string_view>> split_label(std::string_view line) {
  std::size_t at = line.find_first_not_of(' ');
  std::size_t colon = line.find(": ");
  if (at == std::string_view::npos || colon == std::string_view::npos || colon <= at) {
    return std::nullopt;
  }
  auto rank = parse_int(line.substr(at, colon - at));
  if (!rank || *rank < 0 || *rank > k_max_world_size) {
    return std::nullopt;
  }
  return std::pair{static_cast<int>(*rank), line.substr(colon + 2)};
}

} // namespace

void LabeledOutput::feed(Stream stream, std::string_view bytes) {
  std::string& pending = pending_[stream == Stream::out ? 0 : 1];
  pending.append(bytes);
  std::size_t start = 0;
  for (std::size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
    line(stream, std::string_view(pending).substr(start, nl + 1 - start));
    start = nl + 1;
  }
  pending.erase(0, start);
}

void LabeledOutput::finish() {
  for (int s = 0; s < 2; ++s) {
    if (!pending_[s].empty()) {
      line(s == 0 ? Stream::out : Stream::err, pending_[s]);
      pending_[s].clear();
    }
  }
}

void LabeledOutput::line(Stream stream, std::string_view text) {
  stepd_says(text);
  auto labeled = split_label(text);
  if (!labeled || labeled->first >= world_size_) {
    srun_says(text);
    launch_failure_says(text);
    launcher_says(text);
    return;
  }
  if (stream == Stream::err && marker(labeled->second)) {
    return;
  }
  if (stream == Stream::err) {
    mpi_abort_says(labeled->first, labeled->second);
  }
  to_rank(labeled->first, stream, labeled->second);
}

// Open MPI's two lines from the aborting rank itself: "MPI_ABORT was invoked
// on rank 3 in communicator MPI_COMM_WORLD", then "with errorcode 6.".
void LabeledOutput::mpi_abort_says(int rank, std::string_view text) {
  if (text.starts_with("MPI_ABORT was invoked on rank ")) {
    abort_begun_by_ = rank;
    return;
  }
  constexpr std::string_view with_code = "with errorcode ";
  if (abort_begun_by_ != rank || !text.starts_with(with_code)) {
    return;
  }
  abort_begun_by_.reset();
  std::string_view number = trim(text.substr(with_code.size()));
  if (number.ends_with('.')) {
    number.remove_suffix(1);
  }
  auto code = parse_int(number);
  if (code && !mpi_abort_) {
    // The process exits with the code's low byte, as MPI_Abort's exit does.
    mpi_abort_ = std::pair{rank, static_cast<int>(*code & 0xff)};
  }
}

// "slurmstepd-h1: error: *** STEP 7.0 ON h1 CANCELLED AT 2026-... ***" (it
// comes labeled as a rank's stderr too) and "srun: error: Node failure on h3".
void LabeledOutput::stepd_says(std::string_view text) {
  constexpr std::string_view node_failure = "srun: error: Node failure on ";
  if (std::size_t at = text.find(node_failure); at != std::string_view::npos && !failed_node_) {
    std::string_view node = trim(text.substr(at + node_failure.size()));
    if (!node.empty()) failed_node_ = std::string(node);
  }
  std::size_t open = text.find("*** ");
  std::size_t close = text.rfind(" ***");
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open || cancelled_) {
    return;
  }
  std::string_view said = text.substr(open + 4, close - open - 4);
  if ((said.starts_with("STEP ") || said.starts_with("JOB ")) && said.find(" CANCELLED AT ") != std::string_view::npos) {
    cancelled_ = std::string(said);
  }
}

// "srun: error: h3: task 2: Exited with exit code 3": srun's word for a
// failure whose marker may be lost when the step is torn down.
void LabeledOutput::srun_says(std::string_view text) {
  constexpr std::string_view exited = ": Exited with exit code ";
  std::size_t at = text.find(exited);
  std::size_t task = text.rfind("task ", at);
  if (at == std::string_view::npos || task == std::string_view::npos) {
    return;
  }
  auto rank = parse_int(text.substr(task + 5, at - task - 5));
  auto code = parse_int(trim(text.substr(at + exited.size())));
  if (!rank || !code || *rank < 0 || *rank >= world_size_) {
    return;
  }
  ended(static_cast<int>(*rank), static_cast<int>(*code));
  if (*code != 128 + SIGTERM && !srun_reported_) {
    srun_reported_ = std::pair{static_cast<int>(*rank), static_cast<int>(*code)};
  }
}

// "srun: error: task 2 launch failed: Unspecified error" (the rank), or
// "srun: error: Task launch for StepId=9.0 failed on node h2: WHY" (its node).
void LabeledOutput::launch_failure_says(std::string_view text) {
  constexpr std::string_view srun_error = "srun: error: ";
  if (launch_failed_ || !text.starts_with(srun_error)) {
    return;
  }
  std::string_view said = trim(text.substr(srun_error.size()));
  constexpr std::string_view task = "task ";
  constexpr std::string_view launch_failed = " launch failed: ";
  constexpr std::string_view for_step = "Task launch for ";
  constexpr std::string_view on_node = " failed on node ";
  if (said.starts_with(task) && said.find(launch_failed) != std::string_view::npos) {
    auto rank = parse_int(said.substr(task.size(), said.find(launch_failed) - task.size()));
    if (rank && *rank >= 0 && *rank < world_size_) {
      launch_failed_ = LaunchFailure{std::string(said), static_cast<int>(*rank), ""};
    }
  } else if (std::size_t at = said.find(on_node); said.starts_with(for_step) && at != std::string_view::npos) {
    std::string_view node = said.substr(at + on_node.size());
    launch_failed_ = LaunchFailure{std::string(said), std::nullopt, std::string(node.substr(0, node.find(':')))};
  }
}

// The rank srun could not launch (or the first of its node; else rank 0),
// as a launch error.
std::optional<Blame> LabeledOutput::launch_blame(std::span<const RankLaunch> launches) const {
  int rank = launch_failed_->rank.value_or(0);
  if (!launch_failed_->rank) {
    for (const RankLaunch& launch : launches) {
      if (launch.host.name == launch_failed_->node || launch.host.address == launch_failed_->node) {
        rank = launch.rank;
        break;
      }
    }
  }
  return Blame{rank, RankExit{to_int(ExitCode::launch), 0, "srun could not launch it: " + launch_failed_->said}};
}

bool LabeledOutput::marker(std::string_view text) {
  std::string_view body = trim(text);
  if (body.starts_with(k_step_marker)) {
    step_ = std::string(trim(body.substr(k_step_marker.size())));
    if (on_step_) {
      on_step_(*step_);
    }
    return true;
  }
  auto failure = parse_exit_marker(body, k_rank_script.exit_marker);
  if (!failure || failure->first >= world_size_) {
    return false;
  }
  if (failure->second == 128 + SIGKILL && (launch_failed_ || cancelled_)) {
    failure->second = 128 + SIGTERM;  // killed as the step was torn down, as the others
  }
  ended(failure->first, failure->second);
  if (!first_) {
    first_ = failure;
  }
  if (!first_own_ && failure->second != 128 + SIGTERM) {
    first_own_ = failure;
  }
  return true;
}

void LabeledOutput::ended(int rank, int code) {
  if (!seen_ended_[static_cast<std::size_t>(rank)]) {
    seen_ended_[static_cast<std::size_t>(rank)] = true;
    ended_.emplace_back(rank, code);
  }
}

std::vector<std::pair<int, int>> LabeledOutput::take_ended() { return std::exchange(ended_, {}); }

std::optional<std::pair<int, int>> LabeledOutput::first_failure() const {
  if (first_own_) {
    return first_own_;
  }
  if (mpi_abort_ && mpi_abort_->second != 0) {
    return mpi_abort_;
  }
  return srun_reported_ ? srun_reported_ : first_;
}

std::optional<Blame> LabeledOutput::blame(const RankExit& /*whole*/, std::span<const RankLaunch> launches) const {
  if (launch_failed_ && !first_own_) {
    return launch_blame(launches);
  }
  auto failure = first_failure();
  if (failure && failure->second != 128 + SIGTERM) {
    return Blame{failure->first, exit_of_code(failure->second)};
  }
  // Ranks stopped by a signal exit 0 to srun (rank_script): what Slurm
  // said decides, not srun's exit code.
  if (failed_node_) {
    for (const RankLaunch& launch : launches) {
      if (launch.host.name == *failed_node_ || launch.host.address == *failed_node_) {
        return Blame{launch.rank, RankExit{to_int(ExitCode::launch), 0,
                                           fmt::format("Slurm reports that node {} failed", *failed_node_)}};
      }
    }
  } else if (cancelled_) {
    return Blame{0, exit_of_code(128 + SIGTERM)};
  }
  if (failure) {
    return Blame{failure->first, exit_of_code(failure->second)};
  }
  return std::nullopt;
}

RankExit LabeledOutput::exit_of_code(int code) const {
  const int signo = code > 128 && code < 128 + 65 ? code - 128 : 0;
  if (code == 128 + SIGTERM && cancelled_ && !launch_failed_) {
    return RankExit{code, signo, "",
                    fmt::format("Slurm cancelled the step (scancel, the time limit or preemption): {}", *cancelled_)};
  }
  return RankExit{code, signo, ""};
}

} // namespace ddl::slurm
