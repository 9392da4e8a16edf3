// SPDX-License-Identifier: MIT
#include "src/launch/stdin_feed.hpp"

#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include "src/util/file.hpp"

namespace ddl {

namespace {

// One rank's sink; its mutex keeps a write, the close and a detach apart.
struct Entry {
  explicit Entry(StdinSink s) : sink(std::move(s)) {}
  std::mutex mutex;
  bool dead = false;
  StdinSink sink;
  bool write(std::string_view bytes) {
    std::lock_guard lock(mutex);
    return !dead && sink.write(bytes);
  }
  void end(bool call_close) {
    std::lock_guard lock(mutex);
    if (!dead && call_close) {
      sink.close();
    }
    dead = true;
  }
};

class StdinFeed {
public:
  void attach(int rank, StdinSink sink) {
    std::unique_lock lock(mutex_);
    if (ended_) {
      lock.unlock();
      sink.close();
      return;
    }
    std::shared_ptr<Entry> old = take(rank);
    sinks_[rank] = std::make_shared<Entry>(std::move(sink));
    lock.unlock();
    if (old) {
      old->end(true);
    }
  }

  void start() {
    std::lock_guard lock(mutex_);
    if (!started_ && !sinks_.empty()) {
      started_ = true;
      std::thread([this] { run(); }).detach();
    }
  }

  void detach(int rank) {
    std::shared_ptr<Entry> old;
    {
      std::lock_guard lock(mutex_);
      old = take(rank);
    }
    if (old) {
      old->end(false);
    }
  }

private:
  std::shared_ptr<Entry> take(int rank) {
    auto it = sinks_.find(rank);
    if (it == sinks_.end()) {
      return nullptr;
    }
    auto entry = std::move(it->second);
    sinks_.erase(it);
    return entry;
  }

  static bool readable_here() {
    if (::isatty(STDIN_FILENO) == 0) {
      return true;
    }
    pid_t foreground = ::tcgetpgrp(STDIN_FILENO);
    return foreground < 0 || foreground == ::getpgrp();
  }

  void run() {
    std::string chunk(64 * 1024, '\0');
    while (readable_here()) {
      ssize_t got = ::read(STDIN_FILENO, chunk.data(), chunk.size());
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got <= 0) {
        break;
      }
      hand_out(std::string_view(chunk.data(), static_cast<std::size_t>(got)));
    }
    std::map<int, std::shared_ptr<Entry>> last;
    {
      std::lock_guard lock(mutex_);
      ended_ = true;
      last.swap(sinks_);
    }
    for (auto& [rank, entry] : last) {
      entry->end(true);
    }
  }

  // Writes outside the lock (a write may block on a rank that does not read).
  void hand_out(std::string_view bytes) {
    std::vector<std::pair<int, std::shared_ptr<Entry>>> now;
    {
      std::lock_guard lock(mutex_);
      now.assign(sinks_.begin(), sinks_.end());
    }
    for (auto& [rank, sink] : now) {
      if (!sink->write(bytes)) {
        drop(rank, sink);
      }
    }
  }

  void drop(int rank, const std::shared_ptr<Entry>& sink) {
    {
      std::lock_guard lock(mutex_);
      auto it = sinks_.find(rank);
      if (it == sinks_.end() || it->second != sink) {
        return;
      }
      sinks_.erase(it);
    }
    sink->end(true);
  }

  std::mutex mutex_;
  std::map<int, std::shared_ptr<Entry>> sinks_;
  bool started_ = false;
  bool ended_ = false;
};

StdinFeed& feed() {
  static auto* one = new StdinFeed;  // its thread may outlive main's statics
  return *one;
}

} // namespace

void attach_stdin(int rank, StdinSink sink) { feed().attach(rank, std::move(sink)); }

void detach_stdin(int rank) { feed().detach(rank); }

void start_stdin() { feed().start(); }

StdinSink fd_stdin_sink(int fd) {
  auto owned = std::make_shared<int>(fd);
  return StdinSink{
      [owned](std::string_view bytes) { return *owned >= 0 && write_fully(*owned, bytes); },
      [owned] {
        if (*owned >= 0) {
          ::close(*owned);
          *owned = -1;
        }
      }};
}

} // namespace ddl
