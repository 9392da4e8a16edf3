// SPDX-License-Identifier: MIT
#pragma once

// Feedback while ddl works on many hosts at once (connecting, checking): on
// a terminal, one status line on stderr redrawn in place,
//   ddl: connected 37/64, slowest h12 (3.1s)
// shown only once the phase takes longer than half a second and erased at
// its end; on a pipe nothing, unless -v (log level info), which logs one
// line per host instead. Quiet (-q) shows nothing.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ddl {

class HostProgress {
public:
  // `done_verb` says what is done for a host: "connected", "checked".
  HostProgress(std::string done_verb, std::vector<std::string> hosts);
  ~HostProgress();
  HostProgress(const HostProgress&) = delete;
  HostProgress& operator=(const HostProgress&) = delete;

  // From any thread: work on host i starts, or is done; `failed` says why
  // it ended without being done (a connect that timed out): -v then logs
  // "HOST: why" instead of the done verb.
  void begin(std::size_t i);
  void end(std::size_t i, std::string_view failed = {});

  // The line as it would be drawn now (for tests): "" while nothing is shown.
  std::string text() const;

private:
  using Clock = std::chrono::steady_clock;
  std::string text_locked(Clock::time_point now) const;
  void redraw_loop();

  const std::string verb_;
  const std::vector<std::string> hosts_;
  const bool on_terminal_;
  const bool per_host_log_;
  const Clock::time_point start_ = Clock::now();
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::optional<Clock::time_point>> begun_;  // of hosts still in work
  std::size_t done_ = 0;
  bool finished_ = false;
  bool drawn_ = false;
  std::thread redraw_;
};

} // namespace ddl
