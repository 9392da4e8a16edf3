// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/launch/output.hpp"
#include "src/launch/output_lines.hpp"
#include "src/launch/watchdog.hpp"

namespace ddl {

using SteadyClock = std::chrono::steady_clock;

// The ranks of one attempt as the supervisor sees them: receives the
// backend's events (any thread), turns output into lines for the sinks,
// keeps each rank's last stderr lines, and queues exits for the supervisor's
// thread, waking it through an eventfd.
class Gang final : public RankEvents {
public:
  // `progress` (may be null) sees every line and byte the ranks print.
  Gang(Output& output, std::vector<RankLaunch> launches, int attempt, ProgressBoard* progress = nullptr);
  ~Gang() override;
  Gang(const Gang&) = delete;
  Gang& operator=(const Gang&) = delete;

  void started(int rank, long pid) override;
  void output(int rank, Stream stream, std::string_view bytes) override;
  void exited(int rank, const RankExit& how) override;

  // Readable when exits are queued (or wake() was called).
  int wake_fd() const { return wake_fd_; }
  void wake();
  // The exits reported since the last call, in order.
  std::vector<std::pair<int, RankExit>> take_exits();

  const std::vector<RankLaunch>& launches() const { return launches_; }
  int attempt() const { return attempt_; }
  // Valid once the rank has exited.
  const LineTail& stderr_tail(int rank) const { return ranks_[static_cast<std::size_t>(rank)].tail; }
  // Valid once the rank has exited: MPI_Init refused under the singleton
  // guard (src/render/frameworks/mpi.hpp), as one of its stderr lines said.
  bool refused_as_singleton(int rank) const { return ranks_[static_cast<std::size_t>(rank)].singleton_refused; }

private:
  struct RankState {
    std::array<LineAssembler, 2> lines;  // stdout, stderr
    LineTail tail;
    bool singleton_refused = false;
  };
  void add_stderr_line(RankState& state, const std::string& shown);

  Output& output_;
  ProgressBoard* progress_;
  std::vector<RankLaunch> launches_;
  int attempt_;
  std::vector<RankState> ranks_;
  int wake_fd_ = -1;
  std::mutex mutex_;
  std::vector<std::pair<int, RankExit>> exits_;
};

} // namespace ddl
