// SPDX-License-Identifier: MIT
#include "src/launch/output_writer.hpp"

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>


#include "src/util/file.hpp"
#include "src/util/signals.hpp"

namespace ddl {

struct StreamWriter::Shared {
  int fds[2];
  std::size_t capacity;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::pair<Target, std::string>> queue;
  std::size_t queued_bytes = 0;
  bool writing = false;     // the thread holds an item outside the queue
  bool waiting = true;      // producers may wait for room
  bool stopping = false;    // the owner is gone: the thread ends when idle
  std::size_t dropped = 0;
  bool stdout_closed = false;
  std::function<void()> stdout_closed_callback;

  void run();
};

void StreamWriter::Shared::run() {
  std::unique_lock lock(mutex);
  for (;;) {
    changed.wait(lock, [&] { return !queue.empty() || stopping; });
    if (queue.empty()) return;
    auto [target, bytes] = std::move(queue.front());
    queue.pop_front();
    writing = true;
    bool skip = target == Target::out && stdout_closed;
    lock.unlock();
    bool ok = skip || write_fully(fds[target == Target::out ? 0 : 1], bytes);
    int error = errno;
    lock.lock();
    queued_bytes -= bytes.size();
    writing = false;
    if (!ok && target == Target::out && error == EPIPE && !stdout_closed) {
      stdout_closed = true;
      if (stdout_closed_callback) stdout_closed_callback();
    }
    changed.notify_all();
  }
}

StreamWriter::StreamWriter(int stdout_fd, int stderr_fd, std::size_t capacity)
    : shared_(std::make_shared<Shared>()) {
  shared_->fds[0] = stdout_fd;
  shared_->fds[1] = stderr_fd;
  shared_->capacity = capacity;
  thread_without_signals([shared = shared_] { shared->run(); }).detach();
}

StreamWriter::~StreamWriter() {
  std::lock_guard lock(shared_->mutex);
  shared_->stopping = true;
  shared_->waiting = false;
  shared_->changed.notify_all();
}

bool StreamWriter::write(Target target, std::string bytes, bool may_wait) {
  std::unique_lock lock(shared_->mutex);
  Shared& s = *shared_;
  auto has_room = [&] { return s.queued_bytes + bytes.size() <= s.capacity || s.queued_bytes == 0; };
  if (may_wait) {
    s.changed.wait(lock, [&] { return has_room() || !s.waiting; });
  }
  // ddl's own events may overshoot the cap by as much again: they are few.
  bool room = may_wait ? has_room() : s.queued_bytes + bytes.size() <= 2 * s.capacity;
  if (!room || (target == Target::out && s.stdout_closed)) {
    if (!room) ++s.dropped;
    return false;
  }
  s.queued_bytes += bytes.size();
  s.queue.emplace_back(target, std::move(bytes));
  s.changed.notify_all();
  return true;
}

void StreamWriter::stop_waiting() {
  std::lock_guard lock(shared_->mutex);
  shared_->waiting = false;
  shared_->changed.notify_all();
}

void StreamWriter::resume_waiting() {
  std::lock_guard lock(shared_->mutex);
  shared_->waiting = true;
}

bool StreamWriter::drain(Clock::time_point deadline, const std::function<bool()>& give_up) {
  std::unique_lock lock(shared_->mutex);
  for (;;) {
    if (shared_->queue.empty() && !shared_->writing) return true;
    if (Clock::now() >= deadline || (give_up && give_up())) return false;
    shared_->changed.wait_for(lock, std::chrono::milliseconds(50));
  }
}

std::size_t StreamWriter::dropped() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->dropped;
}

bool StreamWriter::stdout_closed() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->stdout_closed;
}

void StreamWriter::on_stdout_closed(std::function<void()> callback) {
  std::lock_guard lock(shared_->mutex);
  shared_->stdout_closed_callback = std::move(callback);
}

} // namespace ddl
