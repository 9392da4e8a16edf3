// SPDX-License-Identifier: MIT
#include "backends/local/local_backend.hpp"

#include <csignal>

#include <unistd.h>

#include <fmt/core.h>

#include "backends/local/local_access.hpp"
#include "backends/local/spawn.hpp"
#include "backends/stack_dump.hpp"
#include "src/inventory/inventory.hpp"
#include "src/launch/stdin_feed.hpp"
#include "src/util/process.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {
// How long pipes still held by escaped processes are drained after a rank's
// process exited.
constexpr auto k_drain_after_exit = std::chrono::seconds(2);

using Clock = std::chrono::steady_clock;
} // namespace

LocalBackend::LocalBackend() : PerRankBackend(std::make_unique<LocalAccess>()) {
  struct rlimit limit {};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  nofile_soft_ = limit.rlim_cur;
  // ddl needs a few descriptors per rank; the ranks get the old limit back.
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

LocalBackend::~LocalBackend() { shutdown(); }

Result<void> LocalBackend::prepare_gang(const Plan& plan, std::span<const RankLaunch> /*launches*/) {
  struct rlimit limit {};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  auto needed = static_cast<rlim_t>(plan.world_size) * 4 + 64;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed) {
    return fail(ExitCode::launch,
                fmt::format("{} local ranks need about {} open files, but the limit is {}; "
                            "raise it (ulimit -n) or use fewer ranks",
                            plan.world_size, needed, limit.rlim_cur));
  }
  return begin_gang();
}

Result<void> LocalBackend::begin_gang() {
  if (!lifeline_started_) {
    if (auto started = lifeline_.start(); !started) {
      return started;
    }
    lifeline_started_ = true;
  }
  if (!io_thread_.joinable()) {
    io_thread_ = std::thread([this] { io_loop(); });
  }
  return {};
}

Result<void> LocalBackend::start_rank(const RankLaunch& launch, RankEvents& events) {
  if (auto begun = begin_gang(); !begun) {
    return begun;
  }
  auto program = resolve_program(launch);
  if (!program) {
    return fail(program.error());
  }
  auto spawned = spawn_rank(launch, *program, nofile_soft_);
  if (!spawned) {
    return fail(spawned.error());
  }
  lifeline_.watch(spawned->pid);
  auto child = std::make_unique<Child>(lifeline_, launch.rank, spawned->pid, events);
  Child& watched = *child;
  {
    std::lock_guard lock(mutex_);
    children_.push_back(std::move(child));
  }
  events.started(launch.rank, spawned->pid);
  if (spawned->stdin_fd >= 0) {
    attach_stdin(launch.rank, fd_stdin_sink(spawned->stdin_fd));
  }
  ChildProcess process{spawned->pid, -1, spawned->stdout_fd, spawned->stderr_fd};
  ranks_.add(process, watched, {.kill_group_at_exit = true, .drain_after_exit = k_drain_after_exit});
  return {};
}

void LocalBackend::signal_rank(int rank, int signo) {
  std::lock_guard lock(mutex_);
  for (auto& child : children_) {
    if (child->rank == rank) {
      ranks_.signal(child->pid, signo, true);
    }
  }
}

namespace {

// The stack dumper on `pid`, its output onto the rank's own stderr pipe, so
// that it reaches the rank's log and the watchdog's evidence like any rank
// output.
std::string local_dump_script() { return fmt::format("exec >\"/proc/$1/fd/2\" 2>&1\n{}", stack_dump_script()); }

} // namespace

// The dumper leads a process group of its own, which the lifeline kills if
// ddl dies, the deadline kills after `timeout`, and shutdown() kills.
void LocalBackend::run_stack_dump(pid_t pid, DumpTool tool, Millis timeout) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", local_dump_script(), "sh", std::to_string(pid), std::string(dump_tool_name(tool)),
               std::to_string(dump_seconds(timeout))};
  spec.env = environment_with({});
  spec.group = ProcessGroup::new_group;
  spec.death_signal = SIGKILL;
  SpawnResult spawned = spawn_process(spec);
  if (!spawned) {
    return;
  }
  lifeline_.watch(spawned.child.pid);
  {
    std::lock_guard lock(dump_mutex_);
    if (dumps_killed_) {
      kill_child_tree(spawned.child.pid);
    }
    dumper_pids_.push_back(spawned.child.pid);
  }
  pump_output(spawned.child, [](OutputStream, std::string_view) {}, timeout.count());
  std::lock_guard lock(dump_mutex_);
  std::erase(dumper_pids_, spawned.child.pid);
  lifeline_.forget(spawned.child.pid);
}

bool LocalBackend::dump_stacks(int rank, DumpTool tool, Millis timeout) {
  pid_t pid = -1;
  {
    std::lock_guard lock(mutex_);
    for (auto& child : children_) {
      if (child->rank == rank && !child->exited_) {
        pid = child->pid;
      }
    }
  }
  if (pid <= 0) {
    return false;
  }
  std::lock_guard lock(dump_mutex_);
  dumpers_.push_back(thread_without_signals([this, pid, tool, timeout] { run_stack_dump(pid, tool, timeout); }));
  return true;
}

void LocalBackend::shutdown() {
  {
    std::lock_guard lock(mutex_);
    for (auto& child : children_) {
      ranks_.signal(child->pid, SIGKILL, true);
    }
  }
  // Let the I/O thread reap what was just killed and report it, briefly.
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (io_thread_.joinable() && Clock::now() < deadline && ranks_.size() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ranks_.wake();
  if (io_thread_.joinable()) {
    io_thread_.join();
  }
  std::vector<std::thread> dumpers;
  {
    std::lock_guard dump_lock(dump_mutex_);
    dumps_killed_ = true;
    for (pid_t dumper : dumper_pids_) {
      kill_child_tree(dumper);
    }
    dumpers.swap(dumpers_);
  }
  for (std::thread& dumper : dumpers) {
    dumper.join();
  }
  lifeline_.stop();
  lifeline_started_ = false;
  // Ready for the next gang (an elastic re-plan prepares this backend
  // again): its ranks get an I/O thread and a lifeline of their own. A rank
  // still in the set keeps its Child for the set's callbacks.
  std::lock_guard lock(mutex_);
  stopping_ = false;
  if (ranks_.size() == 0) {
    children_.clear();
  }
}

// The one thread that reads every rank's pipes and reaps them.
void LocalBackend::io_loop() {
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        return;
      }
    }
    ranks_.run_once(-1);
  }
}

void LocalBackend::Child::exited(int /*wait_status*/) {
  exited_ = true;
  lifeline.forget(pid);
}

void LocalBackend::Child::ended(int wait_status) {
  ProcessExit how = process_exit(wait_status);
  events.exited(rank, RankExit{how.code, how.signal});
}

} // namespace ddl
