// SPDX-License-Identifier: MIT
#include "backends/slurm/srun_output.hpp"

#include <csignal>
#include <utility>

#include "backends/slurm/srun_command.hpp"
#include "src/util/text.hpp"

namespace ddl::slurm {

namespace {

constexpr std::size_t k_max_srun_text = 64 * 1024;

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
    if (srun_text_.size() < k_max_srun_text) {
      srun_text_.append(text);
    }
    return;
  }
  if (stream == Stream::err && marker(labeled->second)) {
    return;
  }
  sink_(labeled->first, stream, labeled->second);
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

bool LabeledOutput::marker(std::string_view text) {
  std::string_view body = trim(text);
  if (body.starts_with(k_step_marker)) {
    step_ = std::string(trim(body.substr(k_step_marker.size())));
    return true;
  }
  if (!body.starts_with(k_exit_marker)) {
    return false;
  }
  body.remove_prefix(k_exit_marker.size());
  std::size_t space = body.find(" exit ");
  if (space == std::string_view::npos) {
    return false;
  }
  auto rank = parse_int(body.substr(0, space));
  auto code = parse_int(body.substr(space + 6));
  if (!rank || !code || *rank < 0 || *rank >= world_size_) {
    return false;
  }
  std::pair<int, int> failure{static_cast<int>(*rank), static_cast<int>(*code)};
  ended(failure.first, failure.second);
  if (!first_) {
    first_ = failure;
  }
  if (!first_own_ && failure.second != 128 + SIGTERM) {
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
  return srun_reported_ ? srun_reported_ : first_;
}

} // namespace ddl::slurm
