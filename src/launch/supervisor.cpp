// SPDX-License-Identifier: MIT
#include "src/launch/supervisor.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

#include <poll.h>

#include <fmt/core.h>

#include "src/util/duration.hpp"
#include "src/util/signals.hpp"
#include "src/launch/supervisor_gang.hpp"

namespace ddl {

namespace {

enum class StopReason { none, failed, timeout, signal, stdout_closed, launch_error, watchdog };

struct FirstFailure {
  int rank = -1;
  RankExit how;
  double elapsed_s = 0;
};

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

bool is_failure(const RankExit& how) { return how.code != 0 || how.signal != 0 || !how.launch_error.empty(); }

// One attempt: starts every rank and supervises them until all are gone.
class Attempt {
public:
  Attempt(Backend& backend, Output& output, const SupervisorOptions& options, Gang& gang,
          std::optional<SteadyClock::time_point> job_deadline)
      : backend_(backend), output_(output), options_(options), gang_(gang), job_deadline_(job_deadline),
        exited_(gang.launches().size(), false) {}

  void run();

  StopReason reason = StopReason::none;
  int stop_signal = 0;          // for StopReason::signal
  FirstFailure first;
  Error launch_error;
  Error watchdog_error;
  SteadyClock::time_point started_at = SteadyClock::now();

private:
  void start_ranks();
  void handle_signals();
  void handle_exits();
  void check_deadlines();
  void stop(StopReason why, int signo);
  void signal_running(int signo);
  int timeout_ms() const;

  Backend& backend_;
  Output& output_;
  const SupervisorOptions& options_;
  Gang& gang_;
  std::optional<SteadyClock::time_point> job_deadline_;
  std::optional<SteadyClock::time_point> kill_deadline_;
  std::optional<SteadyClock::time_point> last_sigint_;
  std::vector<bool> exited_;
  std::size_t running_ = 0;
};

void Attempt::run() {
  start_ranks();
  while (running_ > 0) {
    std::array<pollfd, 2> fds{{{SignalPipe::fd(), POLLIN, 0}, {gang_.wake_fd(), POLLIN, 0}}};
    int ready = ::poll(fds.data(), fds.size(), timeout_ms());
    if (ready < 0 && errno != EINTR) {
      break;
    }
    handle_signals();
    if (output_.stdout_closed() && reason != StopReason::stdout_closed && reason != StopReason::signal) {
      stop(StopReason::stdout_closed, SIGTERM);
    }
    handle_exits();
    check_deadlines();
  }
}

void Attempt::start_ranks() {
  for (const auto& launch : gang_.launches()) {
    if (reason != StopReason::none) {
      exited_[static_cast<std::size_t>(launch.rank)] = true;
      continue;
    }
    if (auto started = backend_.start(launch, gang_); !started) {
      exited_[static_cast<std::size_t>(launch.rank)] = true;
      launch_error = started.error();
      stop(StopReason::launch_error, SIGTERM);
      continue;
    }
    ++running_;
  }
}

void Attempt::handle_signals() {
  for (int signo : SignalPipe::take()) {
    auto now = SteadyClock::now();
    if (signo == SIGINT && last_sigint_ && now - *last_sigint_ < std::chrono::seconds(1)) {
      signal_running(SIGKILL);
      kill_deadline_.reset();
    } else if (reason == StopReason::signal) {
      signal_running(signo);  // forward again; the first one's grace still runs
    } else {
      reason = StopReason::none;  // a signal outranks any earlier reason
      stop(StopReason::signal, signo);
      stop_signal = signo;
    }
    if (signo == SIGINT) {
      last_sigint_ = now;
    }
  }
}

void Attempt::handle_exits() {
  for (auto& [rank, how] : gang_.take_exits()) {
    auto index = static_cast<std::size_t>(rank);
    if (index >= exited_.size() || exited_[index]) {
      continue;
    }
    exited_[index] = true;
    --running_;
    if (is_failure(how) && first.rank < 0) {
      first = FirstFailure{rank, how, seconds_since(started_at)};
      if (reason == StopReason::none) {
        stop(StopReason::failed, SIGTERM);
      }
    }
  }
}

void Attempt::check_deadlines() {
  auto now = SteadyClock::now();
  if (job_deadline_ && now >= *job_deadline_ && reason != StopReason::timeout) {
    job_deadline_.reset();
    stop(StopReason::timeout, SIGTERM);  // a failure already stopping wins
  }
  if (options_.watchdog && reason == StopReason::none) {
    if (auto problem = options_.watchdog()) {
      watchdog_error = std::move(*problem);
      stop(StopReason::watchdog, SIGTERM);
    }
  }
  if (kill_deadline_ && now >= *kill_deadline_) {
    signal_running(SIGKILL);
    kill_deadline_.reset();
  }
}

void Attempt::stop(StopReason why, int signo) {
  if (reason != StopReason::none) {
    return;
  }
  reason = why;
  signal_running(signo);
  kill_deadline_ = SteadyClock::now() + options_.grace;
}

void Attempt::signal_running(int signo) {
  for (const auto& launch : gang_.launches()) {
    if (!exited_[static_cast<std::size_t>(launch.rank)]) {
      backend_.signal(launch.rank, signo);
    }
  }
}

int Attempt::timeout_ms() const {
  std::optional<SteadyClock::time_point> next = kill_deadline_;
  if (job_deadline_ && (!next || *job_deadline_ < *next)) {
    next = job_deadline_;
  }
  if (options_.watchdog && reason == StopReason::none) {
    auto poll_at = SteadyClock::now() + std::chrono::milliseconds(100);
    if (!next || poll_at < *next) {
      next = poll_at;
    }
  }
  if (!next) {
    return -1;
  }
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

std::string describe_failure(const RankLaunch& launch, const FirstFailure& first) {
  std::string how = first.how.signal != 0 ? fmt::format("was killed by {}", signal_name(first.how.signal))
                                          : fmt::format("exited with code {}", first.how.code);
  return fmt::format("rank {} on {} {} after {}", launch.rank, launch.host.name, how,
                     format_elapsed(first.elapsed_s));
}

void print_failure_summary(Output& output, const Gang& gang, const FirstFailure& first, int attempts) {
  const RankLaunch& launch = gang.launches().at(static_cast<std::size_t>(first.rank));
  std::string text = fmt::format("ddl: error: {}{}\n", describe_failure(launch, first),
                                 attempts > 1 ? fmt::format(" (attempt {} of {})", attempts, attempts) : "");
  const auto& tail = gang.stderr_tail(first.rank).lines();
  if (tail.empty()) {
    text += fmt::format("ddl: rank {} wrote nothing on stderr\n", first.rank);
  } else {
    text += fmt::format("ddl: last {} stderr line{} of rank {}:\n", tail.size(), tail.size() == 1 ? "" : "s",
                        first.rank);
    for (const auto& line : tail) {
      text += fmt::format("  [{}] {}\n", first.rank, line);
    }
  }
  output.message(text);
}

} // namespace

std::string format_elapsed(double seconds) {
  if (seconds < 60 && seconds == static_cast<double>(static_cast<long long>(seconds))) {
    return fmt::format("{}s", static_cast<long long>(seconds));
  }
  if (seconds < 10) {
    return fmt::format("{:.2f}s", seconds);
  }
  if (seconds < 60) {
    return fmt::format("{:.1f}s", seconds);
  }
  auto whole = static_cast<long long>(seconds);
  if (whole < 3600) {
    return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  }
  return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
}

Result<int> supervise(Backend& backend, const Plan& plan, const LaunchBuilder& build,
                      const SupervisorOptions& options) {
  if (auto installed = SignalPipe::install(); !installed) {
    return fail(installed.error());
  }
  if (auto prepared = backend.prepare(plan); !prepared) {
    return fail(prepared.error());
  }
  Output output(options.output);
  auto job_start = SteadyClock::now();
  std::optional<SteadyClock::time_point> deadline;
  if (options.timeout) {
    deadline = job_start + *options.timeout;
  }
  for (int attempt = 0;; ++attempt) {
    auto launches = build(attempt);
    if (!launches) {
      return fail(launches.error());
    }
    if (auto opened = output.begin_attempt(attempt, plan.world_size); !opened) {
      return fail(opened.error());
    }
    Gang gang(output, std::move(*launches), attempt);
    output.on_stdout_closed([&gang] { gang.wake(); });
    Attempt run(backend, output, options, gang, deadline);
    run.run();
    output.on_stdout_closed({});
    output.end_attempt();

    JobSummary summary;
    summary.attempts = attempt + 1;
    summary.elapsed_s = seconds_since(job_start);
    if (run.first.rank >= 0) {
      summary.failed_rank = run.first.rank;
      summary.host = gang.launches().at(static_cast<std::size_t>(run.first.rank)).host.name;
      summary.how = run.first.how;
    }
    switch (run.reason) {
    case StopReason::none:
      summary.result = "ok";
      break;
    case StopReason::failed:
      if (auto pending = SignalPipe::take(); !pending.empty()) {
        // Interrupted while the gang stopped: no restart.
        summary.result = "interrupted";
        summary.exit_code = 128 + pending.front();
        break;
      }
      if (attempt < options.max_restarts) {
        output.message(fmt::format("ddl: {}; restarting (attempt {} of {})\n",
                                   describe_failure(gang.launches().at(static_cast<std::size_t>(run.first.rank)), run.first),
                                   attempt + 2, options.max_restarts + 1));
        output.restarting(attempt + 1, options.max_restarts);
        continue;
      }
      summary.result = "failed";
      summary.exit_code = run.first.how.code;
      print_failure_summary(output, gang, run.first, attempt + 1);
      break;
    case StopReason::timeout:
      summary.result = "timeout";
      summary.exit_code = to_int(ExitCode::timeout);
      output.message(fmt::format("ddl: error: timed out after {}\n", format_duration(*options.timeout)));
      break;
    case StopReason::signal:
      summary.result = "interrupted";
      summary.exit_code = 128 + run.stop_signal;
      break;
    case StopReason::stdout_closed:
      summary.result = "interrupted";
      summary.exit_code = 128 + SIGPIPE;
      break;
    case StopReason::launch_error:
      summary.result = "launch_error";
      summary.exit_code = to_int(run.launch_error.code);
      output.summary(summary);
      return fail(run.launch_error);
    case StopReason::watchdog:
      summary.result = "rendezvous_timeout";
      summary.failed_rank = -1;  // the ranks were stopped by ddl, none failed
      summary.host.clear();
      summary.how = RankExit{};
      summary.exit_code = to_int(run.watchdog_error.code);
      output.summary(summary);
      return fail(run.watchdog_error);
    }
    output.summary(summary);
    return summary.exit_code;
  }
}

} // namespace ddl
