// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace ddl {

// ddl's own stdout and stderr, written by a thread of their own so that a
// reader that stops reading (a stuck pager, a FIFO nobody reads) can never
// block the supervisor. Bytes wait in a bounded queue: a rank's output line
// waits for room while the job runs normally (backpressure, nothing lost);
// once the job is stopping, or for ddl's own events, a full queue drops the
// line and counts it instead. Thread-safe.
class StreamWriter {
public:
  enum class Target { out, err };
  using Clock = std::chrono::steady_clock;

  StreamWriter(int stdout_fd, int stderr_fd, std::size_t capacity);
  ~StreamWriter();  // drain(give up at once), then leaves a blocked thread behind
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  // Queues one whole line (or event). With `may_wait`, waits for room unless
  // stop_waiting() was called. False when it was dropped.
  bool write(Target target, std::string bytes, bool may_wait);
  // From now on no write waits (the job is stopping); resume_waiting() undoes it.
  void stop_waiting();
  void resume_waiting();
  // Waits until every queued byte is written, `deadline` passes or
  // `give_up()` says so (polled every 50 ms). True when all was written.
  bool drain(Clock::time_point deadline, const std::function<bool()>& give_up);

  std::size_t dropped() const;        // lines dropped because the queue was full
  bool stdout_closed() const;         // a write to stdout failed with EPIPE
  // Called once, from the writer's thread, when stdout first closes.
  void on_stdout_closed(std::function<void()> callback);

  struct Shared;

private:
  std::shared_ptr<Shared> shared_;  // also owned by the thread, which may outlive this
};

} // namespace ddl
