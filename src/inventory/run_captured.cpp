// SPDX-License-Identifier: MIT
#include "src/inventory/run_captured.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fmt/core.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/util/lifeline.hpp"
#include "src/util/process.hpp"
#include "src/util/signals.hpp"

namespace ddl::inventory_detail {

namespace {

// Reads what is ready on `fd` into `sink` (at most one read beyond the cap,
// so that the caller sees it was passed); false at EOF.
bool drain(int fd, std::string& sink) {
  char buffer[8192];
  ssize_t got = ::read(fd, buffer, sizeof buffer);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
    return true;
  }
  if (got <= 0) {
    return false;
  }
  if (sink.size() <= k_max_output) {
    sink.append(buffer, static_cast<std::size_t>(got));
  }
  return true;
}

bool child_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// Collects stdout and stderr until the child exits (or the deadline), then
// kills its process group (anything it left behind) and reaps it.
void supervise(ChildProcess& child, Millis timeout, Captured& result) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  bool out_open = true;
  bool err_open = true;
  bool exited = false;
  while (true) {
    if (stop::requested()) {
      result.stopped = true;
      break;
    }
    pollfd fds[3] = {{out_open ? child.out_fd : -1, POLLIN, 0},
                     {err_open ? child.err_fd : -1, POLLIN, 0},
                     {stop::fd(), POLLIN, 0}};
    // Both pipes closed: the child is exiting, so look again soon.
    const int ready = ::poll(fds, 3, exited ? 0 : stop::wait_ms(out_open || err_open ? 50 : 1));
    if (ready > 0 && fds[2].revents != 0) {
      continue;  // a signal: stop::requested() says so
    }
    if (ready > 0) {
      if (out_open && (fds[0].revents & (POLLIN | POLLHUP)) != 0) {
        out_open = drain(child.out_fd, result.out);
        if (result.out.size() > k_max_output) {
          result.too_much_output = true;
          break;
        }
      }
      if (err_open && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
        err_open = drain(child.err_fd, result.err);
      }
      continue;
    }
    if (exited || (!out_open && !err_open && child_exited(child.pid))) {
      break;
    }
    exited = child_exited(child.pid);
    if (!exited && Clock::now() >= deadline) {
      result.timed_out = true;
      break;
    }
  }
  ::kill(-child.pid, SIGKILL);
  while (::waitpid(child.pid, &result.status, 0) < 0 && errno == EINTR) {
  }
  close_fd(child.out_fd);
  close_fd(child.err_fd);
}

} // namespace

Result<Captured> run_captured(const std::vector<std::string>& argv, Millis timeout) {
  SpawnSpec spec;
  spec.argv = argv;
  spec.env = environment_with({});
  spec.group = ProcessGroup::new_group;
  spec.death_signal = SIGKILL;
  // Kills the group (what the script started too) should ddl die first.
  Lifeline lifeline;
  if (auto watching = lifeline.start(); !watching) {
    return fail(watching.error());
  }
  auto started = spawn_process(spec);
  if (!started) {
    const char* why = std::strerror(started.failure.error);
    switch (started.failure.stage) {
    case SpawnStage::pipes:
      return fail(ExitCode::launch, fmt::format("cannot create a pipe: {}", why));
    case SpawnStage::fork:
      return fail(ExitCode::launch, fmt::format("cannot start {}: {}", argv[0], why));
    default:
      return fail(ExitCode::launch, fmt::format("cannot run {}: {}", argv[0], why));
    }
  }
  lifeline.watch(started.child.pid);
  Captured result;
  supervise(started.child, timeout, result);
  lifeline.forget(started.child.pid);
  return result;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {}", WTERMSIG(status));
  }
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

} // namespace ddl::inventory_detail
