// SPDX-License-Identifier: MIT
#include "src/launch/supervisor.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

#include <poll.h>

#include <fmt/core.h>

#include "src/util/signals.hpp"
#include "src/launch/supervisor_gang.hpp"

namespace ddl {

namespace {

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
  std::vector<RankFailure> failures;  // every failed rank, in the order seen
  Error launch_error;
  Error watchdog_error;
  SteadyClock::time_point started_at = SteadyClock::now();

private:
  void start_ranks();
  void handle_signals();
  void forward_asked_signals();
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
    const int asked_fd = options_.rank_signals != nullptr ? options_.rank_signals->fd() : -1;
    std::array<pollfd, 3> fds{{{SignalPipe::fd(), POLLIN, 0}, {gang_.wake_fd(), POLLIN, 0}, {asked_fd, POLLIN, 0}}};
    int ready = ::poll(fds.data(), fds.size(), timeout_ms());
    if (ready < 0 && errno != EINTR) {
      break;
    }
    handle_signals();
    forward_asked_signals();
    if (output_.stdout_closed() && reason != StopReason::stdout_closed && reason != StopReason::signal) {
      stop(StopReason::stdout_closed, SIGTERM);
    }
    handle_exits();
    check_deadlines();
  }
}

void Attempt::start_ranks() {
  for (const auto& launch : gang_.launches()) {
    if (stop::requested()) {  // never a rank after a Ctrl-C or the deadline
      handle_signals();
      check_deadlines();
    }
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

// `ddl signal JOB SIG` for a signal that does not stop ddl: to every rank.
void Attempt::forward_asked_signals() {
  if (options_.rank_signals != nullptr) {
    for (int signo : options_.rank_signals->take()) {
      signal_running(signo);
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
    if (is_failure(how)) {
      failures.push_back({rank, gang_.launches()[index].host.name, how});
    }
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
  if (options_.on_state) {
    options_.on_state("stopping", gang_.attempt());
  }
  output_.stop_waiting();  // a stuck reader of ddl's stdout must not hold the stop up
  signal_running(signo);
  kill_deadline_ = SteadyClock::now() + options_.grace;
}

// Forwards `signo` to every rank still running: the one path of every
// signal to the ranks (ddl's own SIGINT/SIGTERM/SIGHUP, `ddl signal`, stops).
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

// The failed rank's torch error file (TORCHELASTIC_ERROR_FILE), when it
// wrote one in this attempt and the backend can read it.
std::optional<RankError> read_rank_error(Backend& backend, const RankLaunch& launch,
                                         std::chrono::system_clock::time_point since) {
  for (const auto& [name, path] : launch.env) {
    if (name == "TORCHELASTIC_ERROR_FILE" && !path.empty()) {
      if (auto text = backend.read_rank_file(launch, path, since, k_error_file_max_bytes)) {
        return parse_torch_error_file(*text);
      }
    }
  }
  return std::nullopt;
}

// What ddl prints when the job ends: the failure summary, or the timeout.
void report_end(Output& output, const Gang& gang, const AttemptEnd& end, int attempts,
                const SupervisorOptions& options) {
  if (end.reason == StopReason::failed) {
    const RankLaunch& launch = gang.launches().at(static_cast<std::size_t>(end.first.rank));
    output.message(failure_summary(launch, end.first, gang.stderr_tail(end.first.rank).lines(), attempts,
                                   end.rank_error));
  } else if (end.reason == StopReason::timeout) {
    output.message(timeout_message(*options.timeout));
  }
}

// Each rank's host and local rank, for prefixes and --fold headers.
std::vector<RankLabel> rank_labels(const Plan& plan) {
  std::vector<RankLabel> labels;
  for (const RankSlot& slot : plan.ranks) {
    labels.push_back({plan.hosts.at(slot.host_index).name, slot.local_rank});
  }
  return labels;
}

OutputOptions with_labels(OutputOptions options, const Plan& plan) {
  options.labels = rank_labels(plan);
  return options;
}

} // namespace

namespace {

// Waits `wait` before the next attempt; a signal to ddl cuts it short and
// is returned.
std::optional<int> wait_for_restart(Millis wait) {
  const auto until = SteadyClock::now() + wait;
  while (SteadyClock::now() < until) {
    pollfd fd{SignalPipe::fd(), POLLIN, 0};
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - SteadyClock::now()).count();
    ::poll(&fd, 1, static_cast<int>(std::clamp<long long>(left, 0, 60'000)));
    if (auto pending = SignalPipe::take(); !pending.empty()) {
      return pending.front();
    }
  }
  return std::nullopt;
}

} // namespace

Result<int> supervise(Backend& backend, const Plan& first_plan, const LaunchBuilder& build,
                      const SupervisorOptions& options) {
  if (auto installed = SignalPipe::install(); !installed) {
    return fail(installed.error());
  }
  const Plan* plan = &first_plan;
  RestartPolicy fallback(RestartRules{.max_restarts = options.max_restarts});
  RestartPolicy& policy = options.policy != nullptr ? *options.policy : fallback;
  // Attempt 0's launches are built first: prepare() checks what they run.
  auto launches = build(0);
  if (!launches) {
    return fail(launches.error());
  }
  if (stop::requested()) {
    return fail(stop::error("preparing the launch"));
  }
  if (auto prepared = backend.prepare(*plan, *launches); !prepared) {
    bool stopped = stop::requested() && !stop::is_stop_error(prepared.error());
    return fail(stopped ? stop::error("preparing the hosts") : prepared.error());
  }
  Output output(with_labels(options.output, first_plan));
  std::size_t announced = 0;  // excluded hosts already named
  auto announce_excluded = [&](int attempt) {
    for (; announced < policy.excluded().size(); ++announced) {
      output.host_excluded(policy.excluded()[announced], attempt);
    }
  };
  announce_excluded(0);
  auto job_start = SteadyClock::now();
  std::optional<SteadyClock::time_point> deadline = options.deadline;
  if (options.timeout && !deadline) {
    deadline = job_start + *options.timeout;
  }
  bool replanned = false;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0 && !replanned) {
      launches = build(attempt);
      if (!launches) {
        return fail(launches.error());
      }
    }
    replanned = false;
    if (auto opened = output.begin_attempt(attempt, plan->world_size); !opened) {
      return fail(opened.error());
    }
    const auto attempt_start = std::chrono::system_clock::now();
    Gang gang(output, std::move(*launches), attempt);
    output.on_stdout_closed([&gang] { gang.wake(); });
    Attempt run(backend, output, options, gang, deadline);
    if (options.on_state) {
      options.on_state("running", attempt);
    }
    run.run();
    output.on_stdout_closed({});
    output.end_attempt();

    AttemptEnd end{run.reason, run.stop_signal, run.first, "", {}, {}};
    if (run.first.rank >= 0) {
      const RankLaunch& failed = gang.launches().at(static_cast<std::size_t>(run.first.rank));
      end.failed_host = failed.host.name;
      if (run.reason == StopReason::failed) {
        end.rank_error = read_rank_error(backend, failed, attempt_start);
      }
    }
    std::string not_restarted;
    if (run.reason == StopReason::failed) {
      if (auto pending = SignalPipe::take(); !pending.empty()) {
        // Interrupted while the gang stopped: no restart.
        end.reason = StopReason::signal;
        end.stop_signal = pending.front();
      } else {
        RestartDecision decision = policy.after_failure(run.failures);
        const RankLaunch& failed = gang.launches().at(static_cast<std::size_t>(run.first.rank));
        announce_excluded(attempt + 1);
        not_restarted = decision.why;
        if (decision.verdict != Verdict::stop) {
          output.message(decision.lost.empty() && decision.verdict == Verdict::restart
                             ? restart_message(failed, run.first, attempt + 1, options.max_restarts)
                             : elastic_restart_message(failed, run.first, attempt + 1, decision.wait));
          output.restarting(attempt + 1, options.max_restarts);
          if (auto interrupted = wait_for_restart(decision.wait)) {
            end.reason = StopReason::signal;
            end.stop_signal = *interrupted;
          } else if (decision.verdict == Verdict::restart) {
            continue;
          } else {
            backend.shutdown();
            auto next = options.replan(attempt + 1, policy);
            announce_excluded(attempt + 1);
            if (!next) {
              return fail(next.error());
            }
            if (next->not_enough.empty()) {
              plan = next->plan;
              output.set_labels(rank_labels(*plan));
              launches = std::move(next->launches);
              replanned = true;
              continue;
            }
            not_restarted = next->not_enough;
          }
        }
      }
    }
    if (!not_restarted.empty()) {
      output.message(fmt::format("ddl: not restarted: {}\n", not_restarted));
    }
    end.error = run.reason == StopReason::watchdog ? run.watchdog_error : run.launch_error;
    report_end(output, gang, end, attempt + 1, options);
    JobSummary summary = job_summary(end, attempt + 1, seconds_since(job_start));
    summary.dropped_lines = output.dropped_lines();
    summary.log_error = output.log_error();
    summary.excluded_hosts = policy.excluded();
    if (options.output.strict_logs && !summary.log_error.empty() && summary.exit_code == 0) {
      summary.exit_code = static_cast<int>(ExitCode::launch);
      summary.result = "log_error";
    }
    output.summary(summary);
    if (end.reason == StopReason::launch_error || end.reason == StopReason::watchdog) {
      return fail(end.error);
    }
    return summary.exit_code;
  }
}

} // namespace ddl
