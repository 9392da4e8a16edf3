// SPDX-License-Identifier: MIT
#include "backends/local/spawn.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl {

namespace {

// What the child reports through the close-on-exec error pipe.
enum class Stage : int { setup = 1, chdir, exec };

struct ChildError {
  Stage stage;
  int error;
};

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string env_value(const EnvList& env, std::string_view name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->first == name) {
      return it->second;
    }
  }
  return {};
}

void close_pair(std::array<int, 2>& fds) {
  for (int& fd : fds) {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }
}

[[noreturn]] void child_fail(int error_fd, Stage stage) {
  ChildError report{stage, errno};
  [[maybe_unused]] ssize_t ignored = ::write(error_fd, &report, sizeof report);
  ::_exit(127);
}

// Between fork and exec: async-signal-safe calls only.
[[noreturn]] void run_child(pid_t parent, int dev_null, int out_fd, int err_fd, int error_fd,
                            const char* workdir, const char* program, char* const* argv,
                            char* const* envp, rlim_t nofile_soft) {
  if (::setsid() < 0) {
    child_fail(error_fd, Stage::setup);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) {  // ddl died before PDEATHSIG was armed
    ::_exit(127);
  }
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  sigemptyset(&defaults.sa_mask);
  for (int signo = 1; signo < NSIG; ++signo) {
    if (signo != SIGKILL && signo != SIGSTOP) {
      ::sigaction(signo, &defaults, nullptr);
    }
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(dev_null, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) {
    child_fail(error_fd, Stage::setup);
  }
  if (workdir[0] != '\0' && ::chdir(workdir) != 0) {
    child_fail(error_fd, Stage::chdir);
  }
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && nofile_soft < limit.rlim_cur) {
    limit.rlim_cur = nofile_soft;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  // Only 0-2 survive exec; the error pipe closes on success.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  ::execve(program, argv, envp);
  child_fail(error_fd, Stage::exec);
}

std::string describe_child_error(const RankLaunch& launch, const std::string& program, ChildError report) {
  std::string where = fmt::format("rank {} on {}", launch.rank, launch.host.name);
  switch (report.stage) {
  case Stage::chdir:
    return fmt::format("{}: cannot change to directory {}: {}", where, launch.workdir, std::strerror(report.error));
  case Stage::exec:
    return fmt::format("{}: cannot execute {}: {}", where, program, std::strerror(report.error));
  case Stage::setup:
    break;
  }
  return fmt::format("{}: cannot set up the process: {}", where, std::strerror(report.error));
}

} // namespace

Result<std::string> resolve_program(const RankLaunch& launch) {
  if (launch.argv.empty() || launch.argv[0].empty()) {
    return fail(ExitCode::usage, "no command to run");
  }
  const std::string& word = launch.argv[0];
  if (word.find('/') != std::string::npos) {
    if (word[0] == '/' || launch.workdir.empty()) {
      return word;
    }
    return launch.workdir + "/" + word;
  }
  std::string path = env_value(launch.env, "PATH");
  if (path.empty()) {
    const char* own = std::getenv("PATH");
    path = own != nullptr ? own : "/usr/local/bin:/usr/bin:/bin";
  }
  for (const auto& dir : split(path, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + word;
    if (is_executable_file(candidate)) {
      return candidate;
    }
  }
  return fail(ExitCode::launch,
              fmt::format("rank {} on {}: command not found: {}", launch.rank, launch.host.name, word));
}

Result<SpawnedRank> spawn_rank(const RankLaunch& launch, const std::string& program, rlim_t nofile_soft) {
  // Everything the child needs is built before fork.
  std::vector<std::string> env_strings;
  env_strings.reserve(launch.env.size());
  for (const auto& [name, value] : launch.env) {
    env_strings.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (auto& entry : env_strings) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  std::vector<std::string> args = launch.argv;
  std::vector<char*> argv;
  for (auto& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);

  std::array<int, 2> out{-1, -1};
  std::array<int, 2> err{-1, -1};
  std::array<int, 2> report{-1, -1};
  int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (dev_null < 0 || ::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0 ||
      ::pipe2(report.data(), O_CLOEXEC) != 0) {
    std::string reason = std::strerror(errno);
    close_pair(out);
    close_pair(err);
    close_pair(report);
    if (dev_null >= 0) {
      ::close(dev_null);
    }
    return fail(ExitCode::launch, fmt::format("rank {}: cannot create pipes: {} (too many open files? "
                                              "raise ulimit -n)", launch.rank, reason));
  }

  // No signal handler of ddl may run in the child before exec.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    run_child(parent, dev_null, out[1], err[1], report[1], launch.workdir.c_str(), program.c_str(),
              argv.data(), envp.data(), nofile_soft);
  }
  int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(dev_null);
  ::close(out[1]);
  ::close(err[1]);
  ::close(report[1]);
  out[1] = err[1] = report[1] = -1;
  if (pid < 0) {
    close_pair(out);
    close_pair(err);
    close_pair(report);
    return fail(ExitCode::launch, fmt::format("rank {}: cannot fork: {}", launch.rank, std::strerror(fork_error)));
  }

  ChildError child_error{};
  ssize_t got = 0;
  do {
    got = ::read(report[0], &child_error, sizeof child_error);
  } while (got < 0 && errno == EINTR);
  close_pair(report);
  if (got > 0) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    close_pair(out);
    close_pair(err);
    return fail(ExitCode::launch, describe_child_error(launch, program, child_error));
  }
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  return SpawnedRank{pid, out[0], err[0]};
}

} // namespace ddl
