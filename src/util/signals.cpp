// SPDX-License-Identifier: MIT
#include "src/util/signals.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/core.h>

namespace ddl {

namespace {

constexpr std::array<int, 3> k_forwarded = {SIGINT, SIGTERM, SIGHUP};

int g_read_fd = -1;
volatile int g_write_fd = -1;  // read by the handler

extern "C" void on_signal(int signo) {
  int saved = errno;
  auto byte = static_cast<unsigned char>(signo);
  if (g_write_fd >= 0) {
    [[maybe_unused]] ssize_t ignored = ::write(g_write_fd, &byte, 1);
  }
  errno = saved;
}

} // namespace

Result<void> SignalPipe::install() {
  if (g_read_fd >= 0) {
    return {};
  }
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC | O_NONBLOCK) != 0) {
    return fail(ExitCode::launch, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  g_read_fd = fds[0];
  g_write_fd = fds[1];
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signo : k_forwarded) {
    ::sigaction(signo, &action, nullptr);
  }
  ::signal(SIGPIPE, SIG_IGN);
  return {};
}

int SignalPipe::fd() { return g_read_fd; }

std::vector<int> SignalPipe::take() {
  std::vector<int> received;
  if (g_read_fd < 0) {
    return received;
  }
  std::array<unsigned char, 64> bytes{};
  while (true) {
    ssize_t got = ::read(g_read_fd, bytes.data(), bytes.size());
    if (got <= 0) {
      if (got < 0 && errno == EINTR) {
        continue;
      }
      return received;
    }
    for (ssize_t i = 0; i < got; ++i) {
      received.push_back(bytes[static_cast<std::size_t>(i)]);
    }
  }
}

void SignalPipe::uninstall() {
  for (int signo : k_forwarded) {
    ::signal(signo, SIG_DFL);
  }
  ::signal(SIGPIPE, SIG_DFL);
  if (g_read_fd >= 0) {
    int write_fd = g_write_fd;
    g_write_fd = -1;
    ::close(write_fd);
    ::close(g_read_fd);
    g_read_fd = -1;
  }
}

} // namespace ddl
