// SPDX-License-Identifier: MIT
#include "src/launch/supervisor_gang.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include "src/render/frameworks/mpi.hpp"

namespace ddl {

Gang::Gang(Output& output, std::vector<RankLaunch> launches, int attempt, ProgressBoard* board)
    : output_(output), progress_(board), launches_(std::move(launches)), attempt_(attempt),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  bool progress = output_.passes_carriage_returns();
  ranks_.reserve(launches_.size());
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    RankState state{{LineAssembler(k_max_line_bytes, progress), LineAssembler(k_max_line_bytes, progress)},
                    LineTail(), false};
    ranks_.push_back(std::move(state));
  }
}

Gang::~Gang() { ::close(wake_fd_); }

void Gang::started(int rank, long pid) {
  output_.started(rank, launches_.at(static_cast<std::size_t>(rank)).host.name, pid, attempt_);
}

void Gang::output(int rank, Stream stream, std::string_view bytes) {
  RankState& state = ranks_.at(static_cast<std::size_t>(rank));
  if (progress_ != nullptr) {
    progress_->bytes(rank);
  }
  state.lines[stream == Stream::out ? 0 : 1].feed(bytes, [&](std::string_view line, LineEnd end) {
    const std::string shown = output_.line(rank, stream, line, end);  // redacted
    if (progress_ != nullptr) {
      progress_->line(rank, shown);
    }
    if (stream == Stream::err) {
      add_stderr_line(state, shown);
    }
  });
}

void Gang::exited(int rank, const RankExit& how) {
  RankState& state = ranks_.at(static_cast<std::size_t>(rank));
  state.lines[0].finish([&](std::string_view line, LineEnd end) { output_.line(rank, Stream::out, line, end); });
  state.lines[1].finish(
      [&](std::string_view line, LineEnd end) { add_stderr_line(state, output_.line(rank, Stream::err, line, end)); });
  output_.exited(rank, how);
  // Wake under the lock: once the supervisor has taken the last exit it may
  // destroy the Gang, and a wake after the unlock would write to a closed fd.
  std::lock_guard lock(mutex_);
  exits_.emplace_back(rank, how);
  wake();
}

void Gang::add_stderr_line(RankState& state, const std::string& shown) {
  state.tail.add(shown);
  state.singleton_refused = state.singleton_refused || singleton_guard_refused(shown);
}

void Gang::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t ignored = ::write(wake_fd_, &one, sizeof one);
}

std::vector<std::pair<int, RankExit>> Gang::take_exits() {
  std::uint64_t drained = 0;
  [[maybe_unused]] ssize_t ignored = ::read(wake_fd_, &drained, sizeof drained);
  std::lock_guard lock(mutex_);
  return std::exchange(exits_, {});
}

} // namespace ddl
