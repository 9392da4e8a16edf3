// SPDX-License-Identifier: MIT
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>

#include "src/util/process.hpp"

namespace ddl {

int pump_output(ChildProcess& child,
                const std::function<void(OutputStream, std::string_view)>& sink,
                std::optional<long> deadline_ms, bool* timed_out) {
  auto start = std::chrono::steady_clock::now();
  char buffer[65536];
  while (child.out_fd >= 0 || child.err_fd >= 0) {
    pollfd fds[2] = {{child.out_fd, POLLIN, 0}, {child.err_fd, POLLIN, 0}};
    int wait_ms = -1;
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
      wait_ms = static_cast<int>(*deadline_ms - elapsed);
    }
    int ready = ::poll(fds, 2, wait_ms);
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
