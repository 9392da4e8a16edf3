// SPDX-License-Identifier: MIT
#include "backends/local/local_backend.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
constexpr int k_stdout = 0;
constexpr int k_stderr = 1;
constexpr int k_process = 2;
// How long pipes still held by escaped processes are drained after a rank's
// process exited.
constexpr auto k_drain_after_exit = std::chrono::seconds(2);
constexpr std::size_t k_read_chunk = 64 * 1024;

using Clock = std::chrono::steady_clock;

RankExit decode_status(const siginfo_t& info) {
  RankExit how;
  if (info.si_code == CLD_EXITED) {
    how.code = info.si_status;
  } else {
    how.signal = info.si_status;
    how.code = 128 + info.si_status;
  }
  return how;
}
} // namespace

struct LocalBackend::Child {
  int rank = 0;
  pid_t pid = -1;
  std::array<int, 3> fds{-1, -1, -1};  // stdout, stderr, pidfd
  bool reaped = false;
  bool reported = false;
  RankExit how;
  Clock::time_point reaped_at;
  RankEvents* events = nullptr;
};

LocalBackend::LocalBackend() {
  struct rlimit limit {};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  nofile_soft_ = limit.rlim_cur;
  // ddl needs a few descriptors per rank; the ranks get the old limit back.
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = ~std::uint64_t{0};
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
  io_thread_ = std::thread([this] { io_loop(); });
}

LocalBackend::~LocalBackend() {
  shutdown();
  ::close(epoll_fd_);
  ::close(wake_fd_);
}

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

Result<void> LocalBackend::prepare(const Plan& plan, std::span<const RankLaunch> /*launches*/) {
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

Result<void> LocalBackend::start(const RankLaunch& launch, RankEvents& events) {
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
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, spawned->pid, 0));
  if (pidfd < 0) {
    std::string reason = std::strerror(errno);
    ::kill(-spawned->pid, SIGKILL);
    ::waitpid(spawned->pid, nullptr, 0);
    lifeline_.forget(spawned->pid);
    ::close(spawned->stdout_fd);
    ::close(spawned->stderr_fd);
    return fail(ExitCode::launch, fmt::format("rank {}: pidfd_open: {}", launch.rank, reason));
  }
  auto child = std::make_unique<Child>();
  child->rank = launch.rank;
  child->pid = spawned->pid;
  child->fds = {spawned->stdout_fd, spawned->stderr_fd, pidfd};
  child->events = &events;
  events.started(launch.rank, spawned->pid);
  std::lock_guard lock(mutex_);
  auto index = static_cast<std::uint64_t>(children_.size());
  for (int which = 0; which < 3; ++which) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = index * 4 + static_cast<std::uint64_t>(which);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, child->fds[static_cast<std::size_t>(which)], &event);
  }
  children_.push_back(std::move(child));
  return {};
}

void LocalBackend::signal(int rank, int signo) {
  std::lock_guard lock(mutex_);
  for (auto& child : children_) {
    if (child->rank == rank && !child->reaped) {
      ::kill(-child->pid, signo);
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
      if (child->rank == rank && !child->reaped) {
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
      if (!child->reaped) {
        ::kill(-child->pid, SIGKILL);
      }
    }
  }
  // Let the I/O thread reap what was just killed and report it, briefly.
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    bool all_reported = true;
    {
      std::lock_guard lock(mutex_);
      for (auto& child : children_) {
        all_reported = all_reported && child->reported;
      }
    }
    if (all_reported) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake();
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
  std::lock_guard lock(mutex_);
  for (auto& child : children_) {
    for (int& fd : child->fds) {
      if (fd >= 0) {
        ::close(fd);
        fd = -1;
      }
    }
  }
  lifeline_.stop();
}

void LocalBackend::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t ignored = ::write(wake_fd_, &one, sizeof one);
}

void LocalBackend::io_loop() {
  std::array<epoll_event, 64> ready{};
  while (true) {
    int timeout_ms = -1;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        return;
      }
      // Ranks whose process exited but whose pipes an escaped process holds.
      for (auto& child : children_) {
        if (child->reaped && !child->reported) {
          auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
              child->reaped_at + k_drain_after_exit - Clock::now());
          int left_ms = static_cast<int>(std::max<long long>(0, left.count()));
          timeout_ms = timeout_ms < 0 ? left_ms : std::min(timeout_ms, left_ms);
        }
      }
    }
    int count = ::epoll_wait(epoll_fd_, ready.data(), static_cast<int>(ready.size()), timeout_ms);
    if (count < 0 && errno != EINTR) {
      return;
    }
    for (int i = 0; i < count; ++i) {
      std::uint64_t tag = ready[static_cast<std::size_t>(i)].data.u64;
      if (tag == ~std::uint64_t{0}) {
        std::uint64_t drained = 0;
        [[maybe_unused]] ssize_t ignored = ::read(wake_fd_, &drained, sizeof drained);
        continue;
      }
      Child* child = nullptr;
      {
        std::lock_guard lock(mutex_);
        child = children_[static_cast<std::size_t>(tag / 4)].get();
      }
      int which = static_cast<int>(tag % 4);
      if (which == k_process) {
        on_process_exit(*child);
      } else {
        on_readable(*child, which);
      }
    }
    std::vector<Child*> overdue;
    {
      std::lock_guard lock(mutex_);
      for (auto& child : children_) {
        if (child->reaped && !child->reported && Clock::now() >= child->reaped_at + k_drain_after_exit) {
          overdue.push_back(child.get());
        }
      }
    }
    for (Child* child : overdue) {
      close_stream(*child, k_stdout);
      close_stream(*child, k_stderr);
      report_if_done(*child);
    }
  }
}

void LocalBackend::on_readable(Child& child, int which) {
  std::array<char, k_read_chunk> buffer{};
  int fd = child.fds[static_cast<std::size_t>(which)];
  if (fd < 0) {
    return;
  }
  // One chunk per wakeup keeps ranks fair; epoll is level-triggered.
  ssize_t got = ::read(fd, buffer.data(), buffer.size());
  if (got > 0) {
    child.events->output(child.rank, which == k_stdout ? Stream::out : Stream::err,
                         std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    return;
  }
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
    return;
  }
  close_stream(child, which);
  report_if_done(child);
}

void LocalBackend::close_stream(Child& child, int which) {
  int& fd = child.fds[static_cast<std::size_t>(which)];
  if (fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    fd = -1;
  }
}

void LocalBackend::on_process_exit(Child& child) {
  siginfo_t info{};
  // Peek first: the zombie keeps the process group id reserved while what is
  // left of the group is killed, so the kill cannot hit a recycled id.
  if (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOWAIT) != 0) {
    return;
  }
  {
    std::lock_guard lock(mutex_);
    ::kill(-child.pid, SIGKILL);
    ::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED);
    child.reaped = true;
    child.reaped_at = Clock::now();
    child.how = decode_status(info);
  }
  lifeline_.forget(child.pid);
  close_stream(child, k_process);
  report_if_done(child);
}

void LocalBackend::report_if_done(Child& child) {
  if (child.reported || !child.reaped || child.fds[k_stdout] >= 0 || child.fds[k_stderr] >= 0) {
    return;
  }
  child.events->exited(child.rank, child.how);
  std::lock_guard lock(mutex_);
  child.reported = true;
}

} // namespace ddl
