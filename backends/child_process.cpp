// SPDX-License-Identifier: MIT
#include "backends/child_process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

extern char** environ;

namespace ddl {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

// The environment of the child: ours with `set_env` applied.
std::vector<std::string> child_environment(const EnvList& set_env) {
  std::vector<std::string> result;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    std::string_view name = text.substr(0, text.find('='));
    bool replaced = std::any_of(set_env.begin(), set_env.end(),
                                [&](const auto& kv) { return kv.first == name; });
    if (!replaced) {
      result.emplace_back(text);
    }
  }
  for (const auto& [name, value] : set_env) {
    result.push_back(name + "=" + value);
  }
  return result;
}

std::vector<char*> c_strings(std::vector<std::string>& words) {
  std::vector<char*> result;
  for (auto& word : words) {
    result.push_back(word.data());
  }
  result.push_back(nullptr);
  return result;
}

[[noreturn]] void exec_child(int in_r, int out_w, int err_w, int report_w, const SpawnOptions& options,
                             pid_t parent, char** argv, char** envp) {
  if (options.new_process_group) {
    ::setpgid(0, 0);
  }
  if (options.death_signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, options.death_signal);
    if (::getppid() != parent) {
      ::_exit(127);
    }
  }
  ::dup2(in_r, 0);
  ::dup2(out_w, 1);
  ::dup2(err_w, 2);
  ::signal(SIGPIPE, options.ignore_sigpipe ? SIG_IGN : SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != report_w) {
      ::close(fd);
    }
  }
  ::execvpe(argv[0], argv, envp);
  int err = errno;
  (void)!::write(report_w, &err, sizeof err);
  ::_exit(127);
}

} // namespace

Result<Spawned> spawn_piped(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) {
    return fail(ExitCode::launch, "empty command");
  }
  std::vector<std::string> words = argv;
  std::vector<std::string> env = child_environment(options.set_env);
  std::vector<char*> c_argv = c_strings(words);
  std::vector<char*> c_env = c_strings(env);
  int in_pipe[2], out_pipe[2], err_pipe[2], report[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    return fail(ExitCode::launch, fmt::format("pipe: {}", std::strerror(errno)));
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    exec_child(in_pipe[0], out_pipe[1], err_pipe[1], report[1], options, parent, c_argv.data(),
               c_env.data());
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(report[1]);
  Spawned child{pid, in_pipe[1], out_pipe[0], err_pipe[0]};
  int exec_errno = 0;
  ssize_t got = pid < 0 ? 0 : ::read(report[0], &exec_errno, sizeof exec_errno);
  ::close(report[0]);
  if (pid < 0 || got == static_cast<ssize_t>(sizeof exec_errno)) {
    int err = pid < 0 ? errno : exec_errno;
    if (pid > 0) {
      ::waitpid(pid, nullptr, 0);
    }
    close_fd(child.in_fd);
    close_fd(child.out_fd);
    close_fd(child.err_fd);
    return fail(ExitCode::launch, fmt::format("cannot run {}: {}", argv[0], std::strerror(err)));
  }
  return child;
}

RankExit exit_of_status(int wait_status) {
  RankExit how;
  if (WIFSIGNALED(wait_status)) {
    how.signal = WTERMSIG(wait_status);
    how.code = 128 + how.signal;
  } else if (WIFEXITED(wait_status)) {
    how.code = WEXITSTATUS(wait_status);
  }
  return how;
}

int pump_and_wait(Spawned& child, const std::function<void(Stream, std::string_view)>& sink,
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
        sink(i == 0 ? Stream::out : Stream::err,
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

Result<Captured> run_captured(const std::vector<std::string>& argv, long timeout_ms) {
  auto child = spawn_piped(argv, {});
  if (!child) {
    return fail(child.error());
  }
  close_fd(child->in_fd);
  Captured result;
  int status = pump_and_wait(
      *child,
      [&](Stream stream, std::string_view bytes) {
        (stream == Stream::out ? result.out : result.err).append(bytes);
      },
      timeout_ms, &result.timed_out);
  result.exit = exit_of_status(status);
  return result;
}

} // namespace ddl
