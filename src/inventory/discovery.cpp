// SPDX-License-Identifier: MIT
// The discovery script and the local GPU count: short-lived child processes,
// bounded in time; on timeout, Ctrl-C, SIGTERM or the job's deadline the
// child's whole process group is killed, and so it is when ddl dies, even by
// SIGKILL (PR_SET_PDEATHSIG and a lifeline watcher).
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fmt/core.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/inventory/inventory.hpp"
#include "src/util/lifeline.hpp"
#include "src/util/process.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr std::size_t k_max_output = 4u << 20;

struct Captured {
  int status = 0;          // as from waitpid
  bool timed_out = false;
  bool too_much_output = false;  // stdout went past k_max_output
  bool stopped = false;          // stop::requested(): ddl is ending
  std::string out;
  std::string err;
};

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

// Runs `argv` in its own process group, our environment, stdin /dev/null.
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

int count_proc_gpus() {
  DIR* dir = ::opendir("/proc/driver/nvidia/gpus");
  if (dir == nullptr) {
    return 0;
  }
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') {
      ++count;
    }
  }
  ::closedir(dir);
  return count;
}

} // namespace

Result<Inventory> script_inventory(const std::string& script, Millis timeout, int default_slots) {
  auto run = run_captured({script}, timeout);
  if (!run) {
    return fail(ExitCode::launch, "discovery script: " + run.error().message);
  }
  if (run->stopped) {
    return fail(stop::error(fmt::format("running the discovery script {}", script)));
  }
  if (run->timed_out) {
    return fail(ExitCode::launch,
                fmt::format("discovery script {} did not finish within {}; it was killed", script,
                            format_duration(timeout)));
  }
  if (run->too_much_output) {
    return fail(ExitCode::usage, fmt::format("discovery script {} printed more than {} bytes; it was "
                                             "killed (ddl reads at most that much)",
                                             script, k_max_output));
  }
  if (!WIFEXITED(run->status) || WEXITSTATUS(run->status) != 0) {
    std::string stderr_tail = last_lines(run->err, 10);
    return fail(ExitCode::launch,
                fmt::format("discovery script {} {}{}{}", script, exit_text(run->status),
                            stderr_tail.empty() ? "" : ":\n", stderr_tail));
  }
  if (trim(run->out).empty()) {
    return fail(ExitCode::launch, fmt::format("discovery script {} printed no hosts", script));
  }
  auto specs = parse_hostfile(run->out, script + " (output)");
  if (!specs) {
    return fail(specs.error());
  }
  Inventory inventory;
  for (const auto& spec : *specs) {
    inventory.push_back(Host{spec.name, spec.name, spec.slots.value_or(default_slots), {}, "script", spec.user, spec.port, spec.labels});
  }
  return inventory;
}

int local_gpu_count() {
  auto run = run_captured({"nvidia-smi", "-L"}, Millis{10'000});
  if (run && !run->timed_out && WIFEXITED(run->status) && WEXITSTATUS(run->status) == 0) {
    int count = 0;
    for (const auto& line : split(run->out, '\n')) {
      count += line.starts_with("GPU ") ? 1 : 0;
    }
    return count;
  }
  return count_proc_gpus();
}

} // namespace ddl
