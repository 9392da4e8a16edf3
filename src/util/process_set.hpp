// SPDX-License-Identifier: MIT
#pragma once

// The one loop around child processes (ninja's SubprocessSet): an epoll
// set of children, each with its stdout and stderr pipes and a pidfd for
// its exit. pump_output (a helper program to its end), run_captured, the
// local backend's ranks, a sweep's trials and the PMIx host's ranks all run
// through it.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "src/util/error.hpp"
#include "src/util/process.hpp"

namespace ddl {

// What a watched child tells its owner, on the thread that runs the set.
class ChildEvents {
public:
  virtual ~ChildEvents() = default;
  // Bytes as they arrive, one read at a time (children take turns).
  virtual void output(OutputStream stream, std::string_view bytes) = 0;
  // It has exited and is reaped (its pipes may still be open).
  virtual void exited(int /*wait_status*/) {}
  // Once, last: it has exited and its pipes are closed (or given up).
  virtual void ended(int wait_status) = 0;
};

struct WatchOptions {
  // The child leads a process group: what is left of it is killed when the
  // child exits (a zombie keeps the group id reserved meanwhile).
  bool kill_group_at_exit = false;
  // How long pipes still held by what the child left behind are read after
  // its exit (what is ready then is read); nullopt: until they close.
  std::optional<std::chrono::milliseconds> drain_after_exit;
};

class ProcessSet {
public:
  ProcessSet();
  // Kills (SIGKILL) and reaps every child still watched.
  ~ProcessSet();
  ProcessSet(const ProcessSet&) = delete;
  ProcessSet& operator=(const ProcessSet&) = delete;

  // Watches `child`, taking its stdout and stderr fds (its stdin stays the
  // caller's). Thread-safe. Without a pidfd (an old kernel) its exit is
  // looked for every 50 ms.
  void add(ChildProcess& child, ChildEvents& events, WatchOptions options = {});
  // One round: waits up to `timeout_ms` (-1: until something happens) and
  // handles what is ready: one read per ready pipe, exits, drains that are
  // over. Call from one thread.
  void run_once(int timeout_ms);
  // Children watched and not yet ended.
  std::size_t size() const;
  // Makes run_once return (from any thread).
  void wake();
  // Also return from run_once when `fd` becomes readable (it is not read).
  void watch_fd(int fd);
  // No longer (an fd at EOF stays readable).
  void unwatch_fd(int fd);
  // `signo` to a watched child that has not exited (its group when
  // `group`); false when it is not watched or has exited. Thread-safe.
  bool signal(pid_t pid, int signo, bool group);
  // Stops reading the child's pipes: it ends once it has exited. From the
  // thread that runs the set.
  void close_pipes(pid_t pid);
  // Stops reading the child's pipes while `held` (they fill, and the child
  // waits on its writes), then reads them again. From the thread that runs
  // the set.
  void hold_output(pid_t pid, bool held);

private:
  struct Entry;
  Entry* find_locked(pid_t pid);
  void on_readable(std::uint64_t id, int which);
  void on_exit(std::uint64_t id);
  bool poll_exit(Entry& entry);
  void reap(Entry& entry);
  void finish_drains();
  bool ready_to_read(std::uint64_t id, int which);
  void finish_if_done(std::uint64_t id);
  void close_stream(Entry& entry, int which);
  int next_timeout(int timeout_ms);

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::unique_ptr<Entry>> entries_;
  std::uint64_t next_id_ = 1;
};

} // namespace ddl
