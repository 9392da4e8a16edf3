// SPDX-License-Identifier: MIT
#include "src/util/signals.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <span>

#include <atomic>

#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/util/signal_names.hpp"

namespace ddl {

namespace {

constexpr std::array<int, 3> k_forwarded = {SIGINT, SIGTERM, SIGHUP};
constexpr std::array<int, 4> k_passed_on = {SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP};

int g_read_fd = -1;
volatile int g_write_fd = -1;  // read by the handler
volatile std::sig_atomic_t g_first_signal = 0;
int g_pass_read_fd = -1;
volatile int g_pass_write_fd = -1;  // read by the handler

extern "C" void on_signal(int signo) {
  int saved = errno;
  if (g_first_signal == 0) {
    g_first_signal = signo;
  }
  auto byte = static_cast<unsigned char>(signo);
  if (g_write_fd >= 0) {
    [[maybe_unused]] ssize_t ignored = ::write(g_write_fd, &byte, 1);
  }
  errno = saved;
}

extern "C" void on_passed_signal(int signo) {
  int saved = errno;
  auto byte = static_cast<unsigned char>(signo);
  if (g_pass_write_fd >= 0) {
    [[maybe_unused]] ssize_t ignored = ::write(g_pass_write_fd, &byte, 1);
  }
  errno = saved;
}

std::vector<int> drain(int fd) {
  std::vector<int> received;
  if (fd < 0) {
    return received;
  }
  std::array<unsigned char, 64> bytes{};
  while (true) {
    ssize_t got = ::read(fd, bytes.data(), bytes.size());
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

// A self-pipe that `handler` writes each of `signals` into; once.
Result<void> install_pipe(int& read_fd, volatile int& write_fd, void (*handler)(int),
                          std::span<const int> signals) {
  if (read_fd >= 0) {
    return {};
  }
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC | O_NONBLOCK) != 0) {
    return fail(ExitCode::launch, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  read_fd = fds[0];
  write_fd = fds[1];
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signo : signals) {
    ::sigaction(signo, &action, nullptr);
  }
  return {};
}

} // namespace

Result<void> SignalPipe::install() {
  auto done = install_pipe(g_read_fd, g_write_fd, on_signal, k_forwarded);
  if (done) {
    ::signal(SIGPIPE, SIG_IGN);
  }
  return done;
}

int SignalPipe::fd() { return g_read_fd; }

std::vector<int> SignalPipe::take() { return drain(g_read_fd); }

Result<void> ForwardedSignals::install() {
  return install_pipe(g_pass_read_fd, g_pass_write_fd, on_passed_signal, k_passed_on);
}

int ForwardedSignals::fd() { return g_pass_read_fd; }

std::vector<int> ForwardedSignals::take() { return drain(g_pass_read_fd); }

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
  g_first_signal = 0;
}

namespace stop {

namespace {

std::atomic<Clock::rep> g_armed_at{0};
std::atomic<Clock::rep> g_deadline{0};  // 0: none
std::atomic<Millis::rep> g_timeout_ms{0};

} // namespace

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : k_forwarded) {
    sigaddset(&set, signo);
  }
  return set;
}

} // namespace

void hold_signals() {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void release_signals() {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

Result<void> arm() {
  if (auto installed = SignalPipe::install(); !installed) {
    return installed;
  }
  Clock::rep zero = 0;
  g_armed_at.compare_exchange_strong(zero, Clock::now().time_since_epoch().count());
  release_signals();
  return {};
}

void set_timeout(std::optional<Millis> timeout) {
  if (!timeout) {
    g_deadline = 0;
    g_timeout_ms = 0;
    return;
  }
  Clock::rep start = g_armed_at.load();
  Clock::time_point from = start == 0 ? Clock::now() : Clock::time_point(Clock::duration(start));
  g_timeout_ms = timeout->count();
  g_deadline = (from + *timeout).time_since_epoch().count();
}

std::optional<Clock::time_point> deadline() {
  Clock::rep at = g_deadline.load();
  if (at == 0) {
    return std::nullopt;
  }
  return Clock::time_point(Clock::duration(at));
}

int first_signal() { return static_cast<int>(g_first_signal); }

bool requested() {
  if (g_first_signal != 0) {
    return true;
  }
  auto at = deadline();
  return at && Clock::now() >= *at;
}

Error error(std::string_view phase) {
  int signo = first_signal();
  if (signo != 0) {
    return Error{static_cast<ExitCode>(128 + signo),
                 fmt::format("interrupted by {} while {}", signal_name(signo), phase)};
  }
  return Error{ExitCode::timeout, fmt::format("timed out after {} (the job's timeout) while {}",
                                              format_duration(Millis(g_timeout_ms.load())), phase)};
}

bool is_stop_error(const Error& error) {
  int code = to_int(error.code);
  return code == to_int(ExitCode::timeout) || code == 128 + SIGINT || code == 128 + SIGTERM ||
         code == 128 + SIGHUP;
}

int wait_ms(int cap_ms) {
  auto at = deadline();
  if (!at) {
    return cap_ms;
  }
  auto left = std::chrono::ceil<Millis>(*at - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, cap_ms));
}

int fd() { return g_read_fd; }

} // namespace stop

std::thread thread_without_signals(std::function<void()> body) {
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  std::thread thread(std::move(body));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return thread;
}

} // namespace ddl
