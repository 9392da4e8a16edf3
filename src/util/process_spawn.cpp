// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <string_view>

#include "src/util/process.hpp"

extern char** environ;

namespace ddl {
namespace {

// The parent's ends and the child's ends of its three standard streams and of
// the close-on-exec pipe that carries a SpawnFailure back.
struct Plumbing {
  std::array<int, 2> in{-1, -1};
  std::array<int, 2> out{-1, -1};
  std::array<int, 2> err{-1, -1};
  std::array<int, 2> report{-1, -1};

  bool open(bool stdin_pipe) {
    if (stdin_pipe) {
      if (::pipe2(in.data(), O_CLOEXEC) != 0) return false;
    } else {
      in[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (in[0] < 0) return false;
    }
    return ::pipe2(out.data(), O_CLOEXEC) == 0 && ::pipe2(err.data(), O_CLOEXEC) == 0 &&
           ::pipe2(report.data(), O_CLOEXEC) == 0;
  }
  void close_child_ends() {
    for (int* fd : {&in[0], &out[1], &err[1], &report[1]}) close_fd(*fd);
  }
  void close_all() {
    close_child_ends();
    for (int* fd : {&in[1], &out[0], &err[0], &report[0]}) close_fd(*fd);
  }
};

// Everything the child needs, built before fork: it may only make
// async-signal-safe calls.
struct ExecImage {
  std::vector<std::string> argv_words;
  std::vector<std::string> env_words;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<cpu_set_t> cpus;  // spec.cpus as a mask; empty: not pinned

  explicit ExecImage(const SpawnSpec& spec) : argv_words(spec.argv), env_words(spec.env) {
    for (auto& word : argv_words) argv.push_back(word.data());
    argv.push_back(nullptr);
    for (auto& word : env_words) envp.push_back(word.data());
    envp.push_back(nullptr);
    if (!spec.cpus.empty()) {
      const int highest = *std::ranges::max_element(spec.cpus);
      cpus.resize(static_cast<std::size_t>(highest) / CPU_SETSIZE + 1);
      for (int cpu : spec.cpus) {
        CPU_SET_S(static_cast<std::size_t>(cpu), cpus.size() * sizeof(cpu_set_t), cpus.data());
      }
    }
  }
};

[[noreturn]] void child_fail(int report_fd, SpawnStage stage) {
  SpawnFailure failure{stage, errno};
  [[maybe_unused]] ssize_t ignored = ::write(report_fd, &failure, sizeof failure);
  ::_exit(127);
}

void reset_signals(bool ignore_sigpipe) {
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  sigemptyset(&defaults.sa_mask);
  for (int signo = 1; signo < NSIG; ++signo) {
    if (signo != SIGKILL && signo != SIGSTOP) {
      ::sigaction(signo, &defaults, nullptr);
    }
  }
  if (ignore_sigpipe) {
    ::signal(SIGPIPE, SIG_IGN);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Between fork and exec: async-signal-safe calls only.
[[noreturn]] void run_child(const SpawnSpec& spec, const ExecImage& image, const Plumbing& pipes,
                            pid_t parent) {
  int report = pipes.report[1];
  if (spec.group == ProcessGroup::new_session && ::setsid() < 0) {
    child_fail(report, SpawnStage::setup);
  }
  if (spec.group == ProcessGroup::new_group) {
    ::setpgid(0, 0);
  }
  if (spec.death_signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, spec.death_signal);
    if (::getppid() != parent) {  // the parent died before PDEATHSIG was armed
      ::_exit(127);
    }
  }
  reset_signals(spec.ignore_sigpipe);
  if (::dup2(pipes.in[0], 0) < 0 || ::dup2(pipes.out[1], 1) < 0 || ::dup2(pipes.err[1], 2) < 0) {
    child_fail(report, SpawnStage::setup);
  }
  if (!spec.workdir.empty() && ::chdir(spec.workdir.c_str()) != 0) {
    child_fail(report, SpawnStage::chdir);
  }
  if (!image.cpus.empty() && ::sched_setaffinity(0, image.cpus.size() * sizeof(cpu_set_t), image.cpus.data()) != 0) {
    child_fail(report, SpawnStage::setup);
  }
  struct rlimit limit {};
  if (spec.nofile_soft && ::getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      *spec.nofile_soft < limit.rlim_cur) {
    limit.rlim_cur = *spec.nofile_soft;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  // Only 0-2 survive exec; the report pipe closes on success.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  if (spec.program.empty()) {
    ::execvpe(image.argv[0], image.argv.data(), image.envp.data());
  } else {
    ::execve(spec.program.c_str(), image.argv.data(), image.envp.data());
  }
  child_fail(report, SpawnStage::exec);
}

// Forks with every signal blocked, so that no handler of ours runs in the child.
pid_t fork_child(const SpawnSpec& spec, const ExecImage& image, const Plumbing& pipes) {
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    run_child(spec, image, pipes, parent);
  }
  int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = fork_error;
  return pid;
}

// The child's SpawnFailure, if it sent one before exec.
std::optional<SpawnFailure> read_report(int report_fd) {
  SpawnFailure failure{};
  ssize_t got = 0;
  do {
    got = ::read(report_fd, &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got > 0) return failure;
  return std::nullopt;
}

} // namespace

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

SpawnResult spawn_process(const SpawnSpec& spec) {
  Plumbing pipes;
  if (spec.argv.empty() || !pipes.open(spec.stdin_pipe)) {
    SpawnResult failed{{}, {SpawnStage::pipes, spec.argv.empty() ? EINVAL : errno}};
    pipes.close_all();
    return failed;
  }
  ExecImage image(spec);
  pid_t pid = fork_child(spec, image, pipes);
  if (pid < 0) {
    SpawnResult failed{{}, {SpawnStage::fork, errno}};
    pipes.close_all();
    return failed;
  }
  if (spec.group == ProcessGroup::new_group) {
    ::setpgid(pid, pid);  // also in the child: whichever runs first
  }
  pipes.close_child_ends();
  auto failure = read_report(pipes.report[0]);
  close_fd(pipes.report[0]);
  if (failure) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    pipes.close_all();
    return {{}, *failure};
  }
  return {{pid, pipes.in[1], pipes.out[0], pipes.err[0]}, {}};
}

std::vector<std::string> environment_with(const std::vector<std::string>& base,
                                          const std::vector<std::string>& set) {
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> result;
  for (const auto& entry : base) {
    bool replaced = std::any_of(set.begin(), set.end(), [&](const std::string& kv) {
      return name_of(kv) == name_of(entry);
    });
    if (!replaced) {
      result.push_back(entry);
    }
  }
  result.insert(result.end(), set.begin(), set.end());
  return result;
}

std::vector<std::string> environment_with(const std::vector<std::string>& set) {
  std::vector<std::string> ours;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    ours.emplace_back(*entry);
  }
  return environment_with(ours, set);
}

ProcessExit process_exit(int wait_status) {
  ProcessExit how;
  if (WIFSIGNALED(wait_status)) {
    how.signal = WTERMSIG(wait_status);
    how.code = 128 + how.signal;
  } else if (WIFEXITED(wait_status)) {
    how.code = WEXITSTATUS(wait_status);
  }
  return how;
}

} // namespace ddl
