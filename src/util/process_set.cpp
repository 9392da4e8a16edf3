// SPDX-License-Identifier: MIT
#include "src/util/process_set.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <vector>

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int k_stdout = 0;
constexpr int k_stderr = 1;
constexpr int k_pidfd = 2;
constexpr std::uint64_t k_wake_tag = ~std::uint64_t{0};
constexpr std::uint64_t k_watched_tag = k_wake_tag - 1;
constexpr std::size_t k_read_chunk = 64 * 1024;
// Without a pidfd, how often an exit is looked for.
constexpr int k_exit_poll_ms = 50;

std::uint64_t tag_of(std::uint64_t id, int which) { return id * 4 + static_cast<std::uint64_t>(which); }

} // namespace

struct ProcessSet::Entry {
  pid_t pid = -1;
  std::array<int, 3> fds{-1, -1, -1};  // stdout, stderr, pidfd
  ChildEvents* events = nullptr;
  WatchOptions options;
  bool reaped = false;
  int status = 0;
  Clock::time_point reaped_at;
};

ProcessSet::ProcessSet()
    : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)), wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = k_wake_tag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
}

ProcessSet::~ProcessSet() {
  std::lock_guard lock(mutex_);
  for (auto& [id, entry] : entries_) {
    if (!entry->reaped) {
      ::kill(entry->options.kill_group_at_exit ? -entry->pid : entry->pid, SIGKILL);
      while (::waitpid(entry->pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    for (int& fd : entry->fds) {
      close_fd(fd);
    }
  }
  ::close(epoll_fd_);
  ::close(wake_fd_);
}

void ProcessSet::add(ChildProcess& child, ChildEvents& events, WatchOptions options) {
  auto entry = std::make_unique<Entry>();
  entry->pid = child.pid;
  entry->fds = {std::exchange(child.out_fd, -1), std::exchange(child.err_fd, -1),
                static_cast<int>(::syscall(SYS_pidfd_open, child.pid, 0))};
  entry->events = &events;
  entry->options = options;
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  for (int which = 0; which < 3; ++which) {
    if (entry->fds[static_cast<std::size_t>(which)] >= 0) {
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = tag_of(id, which);
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, entry->fds[static_cast<std::size_t>(which)], &event);
    }
  }
  entries_.emplace(id, std::move(entry));
}

void ProcessSet::watch_fd(int fd) {
  if (fd < 0) {
    return;
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = k_watched_tag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
}

void ProcessSet::unwatch_fd(int fd) {
  if (fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  }
}

std::size_t ProcessSet::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void ProcessSet::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t ignored = ::write(wake_fd_, &one, sizeof one);
}

ProcessSet::Entry* ProcessSet::find_locked(pid_t pid) {
  for (auto& [id, entry] : entries_) {
    if (entry->pid == pid) {
      return entry.get();
    }
  }
  return nullptr;
}

bool ProcessSet::signal(pid_t pid, int signo, bool group) {
  std::lock_guard lock(mutex_);
  Entry* entry = find_locked(pid);
  if (entry == nullptr || entry->reaped) {
    return false;
  }
  return ::kill(group ? -pid : pid, signo) == 0;
}

void ProcessSet::close_pipes(pid_t pid) {
  std::lock_guard lock(mutex_);
  if (Entry* entry = find_locked(pid)) {
    close_stream(*entry, k_stdout);
    close_stream(*entry, k_stderr);
  }
}

void ProcessSet::hold_output(pid_t pid, bool held) {
  std::lock_guard lock(mutex_);
  for (auto& [id, entry] : entries_) {
    if (entry->pid != pid) {
      continue;
    }
    for (int which : {k_stdout, k_stderr}) {
      int fd = entry->fds[static_cast<std::size_t>(which)];
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = tag_of(id, which);
      if (fd >= 0) {  // removed, not masked: a closed pipe's HUP would wake every round
        ::epoll_ctl(epoll_fd_, held ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, fd, &event);
      }
    }
  }
}

// Call with mutex_ held.
void ProcessSet::close_stream(Entry& entry, int which) {
  int& fd = entry.fds[static_cast<std::size_t>(which)];
  if (fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    close_fd(fd);
  }
}

int ProcessSet::next_timeout(int timeout_ms) {
  std::lock_guard lock(mutex_);
  auto sooner = [&](long long ms) {
    int capped = static_cast<int>(std::max<long long>(0, std::min<long long>(ms, 60'000)));
    timeout_ms = timeout_ms < 0 ? capped : std::min(timeout_ms, capped);
  };
  for (auto& [id, entry] : entries_) {
    if (!entry->reaped && entry->fds[k_pidfd] < 0) {
      sooner(k_exit_poll_ms);
    }
    if (entry->reaped && entry->options.drain_after_exit) {
      auto left = entry->reaped_at + *entry->options.drain_after_exit - Clock::now();
      sooner(std::chrono::ceil<std::chrono::milliseconds>(left).count());
    }
  }
  return timeout_ms;
}

void ProcessSet::run_once(int timeout_ms) {
  std::array<epoll_event, 64> ready{};
  int count = ::epoll_wait(epoll_fd_, ready.data(), static_cast<int>(ready.size()), next_timeout(timeout_ms));
  for (int i = 0; i < count; ++i) {
    const std::uint64_t tag = ready[static_cast<std::size_t>(i)].data.u64;
    if (tag == k_wake_tag) {
      std::uint64_t drained = 0;
      [[maybe_unused]] ssize_t ignored = ::read(wake_fd_, &drained, sizeof drained);
    } else if (tag != k_watched_tag && tag % 4 == k_pidfd) {
      on_exit(tag / 4);
    } else if (tag != k_watched_tag) {
      on_readable(tag / 4, static_cast<int>(tag % 4));
    }
  }
  std::vector<std::uint64_t> unwatched;  // exits without a pidfd
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, entry] : entries_) {
      if (!entry->reaped && entry->fds[k_pidfd] < 0) {
        unwatched.push_back(id);
      }
    }
  }
  for (std::uint64_t id : unwatched) {
    on_exit(id);
  }
  finish_drains();
}

void ProcessSet::on_readable(std::uint64_t id, int which) {
  std::array<char, k_read_chunk> buffer{};
  Entry* entry = nullptr;
  int fd = -1;
  {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(id);
    if (found == entries_.end() || found->second->fds[static_cast<std::size_t>(which)] < 0) {
      return;  // closed in this round
    }
    entry = found->second.get();
    fd = entry->fds[static_cast<std::size_t>(which)];
  }
  // One chunk per wakeup keeps children fair; epoll is level-triggered.
  ssize_t got = ::read(fd, buffer.data(), buffer.size());
  if (got > 0) {
    entry->events->output(which == k_stdout ? OutputStream::out : OutputStream::err,
                          std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    return;
  }
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
    return;
  }
  {
    std::lock_guard lock(mutex_);
    close_stream(*entry, which);
  }
  finish_if_done(id);
}

void ProcessSet::on_exit(std::uint64_t id) {
  Entry* entry = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(id);
    if (found == entries_.end() || found->second->reaped) {
      return;
    }
    entry = found->second.get();
  }
  if (!poll_exit(*entry)) {
    return;
  }
  entry->events->exited(entry->status);
  finish_if_done(id);
}

// Reaps the child if it has exited; true when it did.
bool ProcessSet::poll_exit(Entry& entry) {
  siginfo_t info{};
  // Peek first: the zombie keeps the process group id reserved while what is
  // left of the group is killed, so the kill cannot hit a recycled id.
  const int flags = WEXITED | WNOWAIT | (entry.fds[k_pidfd] < 0 ? WNOHANG : 0);
  if (::waitid(P_PID, static_cast<id_t>(entry.pid), &info, flags) != 0 || info.si_pid != entry.pid) {
    return false;
  }
  std::lock_guard lock(mutex_);
  reap(entry);
  return true;
}

// Call with mutex_ held.
void ProcessSet::reap(Entry& entry) {
  if (entry.options.kill_group_at_exit) {
    ::kill(-entry.pid, SIGKILL);
  }
  while (::waitpid(entry.pid, &entry.status, 0) < 0 && errno == EINTR) {
  }
  entry.reaped = true;
  entry.reaped_at = Clock::now();
  close_stream(entry, k_pidfd);
}

// Children whose drain after exit is over: what their pipes hold now is
// read, then they are given up.
void ProcessSet::finish_drains() {
  std::vector<std::uint64_t> overdue;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, entry] : entries_) {
      const auto& drain = entry->options.drain_after_exit;
      if (entry->reaped && drain && Clock::now() >= entry->reaped_at + *drain) {
        overdue.push_back(id);
      }
    }
  }
  for (std::uint64_t id : overdue) {
    for (int which : {k_stdout, k_stderr}) {
      for (int reads = 0; reads < 64 && ready_to_read(id, which); ++reads) {
        on_readable(id, which);
      }
    }
    {
      std::lock_guard lock(mutex_);
      if (auto found = entries_.find(id); found != entries_.end()) {
        close_stream(*found->second, k_stdout);
        close_stream(*found->second, k_stderr);
      }
    }
    finish_if_done(id);
  }
}

bool ProcessSet::ready_to_read(std::uint64_t id, int which) {
  int fd = -1;
  {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(id);
    fd = found != entries_.end() ? found->second->fds[static_cast<std::size_t>(which)] : -1;
  }
  pollfd ready{fd, POLLIN, 0};
  return fd >= 0 && ::poll(&ready, 1, 0) > 0;
}

// A child that has exited and whose pipes are closed: a pipe closed first
// (or without a pidfd) is reaped here; then it ends and leaves the set.
void ProcessSet::finish_if_done(std::uint64_t id) {
  std::unique_ptr<Entry> done;
  {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(id);
    if (found == entries_.end()) {
      return;
    }
    Entry& entry = *found->second;
    if (entry.fds[k_stdout] >= 0 || entry.fds[k_stderr] >= 0 || !entry.reaped) {
      return;
    }
    done = std::move(found->second);
    entries_.erase(found);
  }
  done->events->ended(done->status);
}

} // namespace ddl
