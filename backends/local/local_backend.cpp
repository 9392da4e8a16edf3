// SPDX-License-Identifier: MIT
#include "backends/local/local_backend.hpp"

#include <csignal>

#include <unistd.h>

#include <fmt/core.h>

#include "backends/local/spawn.hpp"
#include "ddl_version.hpp"
#include "src/inventory/inventory.hpp"
#include "src/util/net.hpp"
#include "src/util/process.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {
// How long pipes still held by escaped processes are drained after a rank's
// process exited.
constexpr auto k_drain_after_exit = std::chrono::seconds(2);

using Clock = std::chrono::steady_clock;
} // namespace

LocalBackend::LocalBackend() {
  struct rlimit limit {};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  nofile_soft_ = limit.rlim_cur;
  // ddl needs a few descriptors per rank; the ranks get the old limit back.
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  io_thread_ = std::thread([this] { io_loop(); });
}

LocalBackend::~LocalBackend() { shutdown(); }

Result<Inventory> LocalBackend::probe_gpus(Inventory hosts) {
  int count = local_gpu_count();
  if (count <= 0) {
    return fail(ExitCode::launch, "slots = \"gpus\": no GPU found on this machine");
  }
  for (auto& host : hosts) {
    host.slots = count;
    host.gpus.clear();
    for (int g = 0; g < count; ++g) {
      host.gpus.push_back(g);
    }
  }
  return hosts;
}

std::vector<HostCheck> LocalBackend::check(const Inventory& hosts) {
  HostCheck check;
  check.reachable = true;
  check.ddl_version = DDL_VERSION;
  check.gpu_count = local_gpu_count();
  return std::vector<HostCheck>(hosts.size(), check);
}

std::optional<Result<int>> LocalBackend::master_port(const Host& /*host*/, int first, int count) {
  return net::free_ports_here(first, count);
}

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
  if (!lifeline_started_) {
    if (auto started = lifeline_.start(); !started) {
      return started;
    }
    lifeline_started_ = true;
  }
  return {};
}

Result<void> LocalBackend::start_rank(const RankLaunch& launch, RankEvents& events) {
  if (!lifeline_started_) {
    if (auto started = lifeline_.start(); !started) {
      return started;
    }
    lifeline_started_ = true;
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

// py-spy's dump of `pid`, written onto the rank's own stderr pipe, so that it
// reaches the rank's log and the watchdog's evidence like any rank output.
constexpr const char* k_stack_dump_script =
    "if command -v py-spy >/dev/null 2>&1; then exec py-spy dump --pid \"$1\" >\"/proc/$1/fd/2\" 2>&1; fi\n"
    "echo \"ddl: py-spy is not installed on $(uname -n); no stack dump\" >\"/proc/$1/fd/2\"\n";

// Runs the dump and waits for it (at most a minute); killed if ddl dies.
void run_stack_dump(pid_t pid) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", k_stack_dump_script, "sh", std::to_string(pid)};
  spec.env = environment_with({});
  spec.death_signal = SIGKILL;
  SpawnResult spawned = spawn_process(spec);
  if (spawned) {
    pump_output(spawned.child, [](OutputStream, std::string_view) {}, 60'000);
  }
}

} // namespace

bool LocalBackend::dump_stacks(int rank) {
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
  dumpers_.push_back(thread_without_signals([pid] { run_stack_dump(pid); }));
  return true;
}

void LocalBackend::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      return;
    }
    for (auto& child : children_) {
      ranks_.signal(child->pid, SIGKILL, true);
    }
  }
  // Let the I/O thread reap what was just killed and report it, briefly.
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline && ranks_.size() > 0) {
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
  {
    std::lock_guard dump_lock(dump_mutex_);
    for (std::thread& dumper : dumpers_) {
      dumper.join();
    }
    dumpers_.clear();
  }
  lifeline_.stop();
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
