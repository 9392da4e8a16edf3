// SPDX-License-Identifier: MIT
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>

#include "src/util/process.hpp"
#include "src/util/signals.hpp"

namespace ddl {

void kill_child_tree(pid_t pid) {
  if (pid <= 0) {
    return;
  }
  if (::getpgid(pid) == pid) {
    ::kill(-pid, SIGKILL);
  } else {
    ::kill(pid, SIGKILL);
  }
}

int pump_output(ChildProcess& child,
                const std::function<void(OutputStream, std::string_view)>& sink,
                std::optional<long> deadline_ms, bool* timed_out, bool* stopped) {
  auto start = std::chrono::steady_clock::now();
  char buffer[65536];
  constexpr int k_stop_poll_ms = 200;
  while (child.out_fd >= 0 || child.err_fd >= 0) {
    if (stopped != nullptr && stop::requested()) {
      kill_child_tree(child.pid);
      *stopped = true;
      break;
    }
    pollfd fds[3] = {{child.out_fd, POLLIN, 0}, {child.err_fd, POLLIN, 0},
                     {stopped != nullptr ? stop::fd() : -1, POLLIN, 0}};
    int wait_ms = stopped != nullptr ? stop::wait_ms(k_stop_poll_ms) : -1;
    if (deadline_ms) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - start).count();
      if (elapsed >= *deadline_ms) {
        ::kill(child.pid, SIGKILL);
        if (timed_out != nullptr) {
          *timed_out = true;
        }
        break;
      }
      int left = static_cast<int>(*deadline_ms - elapsed);
      wait_ms = wait_ms < 0 ? left : std::min(wait_ms, left);
    }
    int ready = ::poll(fds, 3, wait_ms);
    if (ready < 0 && errno != EINTR) {
      break;
    }
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      int& fd = i == 0 ? child.out_fd : child.err_fd;
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        sink(i == 0 ? OutputStream::out : OutputStream::err,
             std::string_view(buffer, static_cast<std::size_t>(n)));
      } else if (n == 0 || errno != EINTR) {
        close_fd(fd);
      }
    }
  }
  close_fd(child.out_fd);
  close_fd(child.err_fd);
  close_fd(child.in_fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

} // namespace ddl
