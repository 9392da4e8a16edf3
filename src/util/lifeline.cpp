// SPDX-License-Identifier: MIT
#include "src/util/lifeline.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

namespace ddl {

namespace {

constexpr std::size_t k_max_groups = 1 << 16;
constexpr int k_op_watch = 1;
constexpr int k_op_forget = 2;

struct Message {
  int op;
  pid_t group;
};

// Runs in the forked watcher: only async-signal-safe calls, no allocation.
[[noreturn]] void watch_loop(int read_fd, pid_t* groups) {
  Message message{};
  std::size_t have = 0;
  auto* bytes = reinterpret_cast<char*>(&message);
  while (true) {
    ssize_t got = ::read(read_fd, bytes + have, sizeof message - have);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      break;
    }
    have += static_cast<std::size_t>(got);
    if (have < sizeof message) {
      continue;
    }
    have = 0;
    for (std::size_t i = 0; i < k_max_groups; ++i) {
      if (message.op == k_op_watch && groups[i] == 0) {
        groups[i] = message.group;
        break;
      }
      if (message.op == k_op_forget && groups[i] == message.group) {
        groups[i] = 0;
        break;
      }
    }
  }
  for (std::size_t i = 0; i < k_max_groups; ++i) {
    if (groups[i] > 0) {
      ::kill(-groups[i], SIGKILL);
    }
  }
  ::_exit(0);
}

} // namespace

Lifeline::~Lifeline() { stop(); }

Result<void> Lifeline::start() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    return fail(ExitCode::launch, fmt::format("cannot create the lifeline pipe: {}", std::strerror(errno)));
  }
  // Allocated before fork: the watcher must not allocate.
  auto groups = std::make_unique<pid_t[]>(k_max_groups);
  int dev_null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t pid = ::fork();
  if (pid < 0) {
    int saved = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    ::close(dev_null);
    return fail(ExitCode::launch, fmt::format("cannot fork: {}", std::strerror(saved)));
  }
  if (pid == 0) {
    ::setsid();  // terminal and process-group signals aimed at ddl miss it
    for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) {
      ::signal(signo, SIG_IGN);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (dev_null >= 0) {
      ::dup2(dev_null, 0);
      ::dup2(dev_null, 1);
      ::dup2(dev_null, 2);
    }
    ::dup2(fds[0], 3);
    ::close_range(4, ~0U, 0);
    watch_loop(3, groups.get());
  }
  ::close(dev_null);
  ::close(fds[0]);
  write_fd_ = fds[1];
  watcher_ = pid;
  return {};
}

void Lifeline::send(int op, pid_t process_group) {
  if (write_fd_ < 0) {
    return;
  }
  Message message{op, process_group};
  while (::write(write_fd_, &message, sizeof message) < 0 && errno == EINTR) {
  }
}

void Lifeline::watch(pid_t process_group) { send(k_op_watch, process_group); }

void Lifeline::forget(pid_t process_group) { send(k_op_forget, process_group); }

void Lifeline::stop() {
  if (write_fd_ >= 0) {
    ::close(write_fd_);
    write_fd_ = -1;
  }
  if (watcher_ > 0) {
    while (::waitpid(watcher_, nullptr, 0) < 0 && errno == EINTR) {
    }
    watcher_ = -1;
  }
}

} // namespace ddl
