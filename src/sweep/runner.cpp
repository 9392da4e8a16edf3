// SPDX-License-Identifier: MIT
#include "src/sweep/runner.hpp"

#include <fcntl.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <filesystem>
#include <list>
#include <map>

#include <fmt/core.h>

#include "src/sweep/metric.hpp"
#include "src/util/file.hpp"
#include "src/util/log.hpp"
#include "src/util/own_path.hpp"
#include "src/util/process.hpp"
#include "src/util/process_set.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/signals.hpp"

namespace ddl::sweep {

namespace {

using Clock = std::chrono::steady_clock;

// Failed attempts in a row (no success between) after which a host is
// excluded for the rest of the sweep, as HopsML blacklists an executor.
constexpr std::size_t k_failures_to_exclude = 2;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

struct Pending {
  int trial = 0;
  int attempt = 0;
  std::set<std::size_t> avoid;  // hosts it failed on
};

// One attempt's `ddl run`, watched by the scheduler's ProcessSet: what it
// prints goes to the trial's output.log; after its exit, what its pipes hold
// then (a helper that outlived it may keep them open).
struct Running final : ChildEvents {
  Running(Pending pending_, Placement placement_, pid_t pid_, int log_fd_, Clock::time_point started_)
      : pending(std::move(pending_)), placement(std::move(placement_)), pid(pid_), log_fd(log_fd_),
        started(started_) {}

  void output(OutputStream /*stream*/, std::string_view bytes) override {
    [[maybe_unused]] bool wrote = write_fully(log_fd, bytes);
  }
  void ended(int status) override { wait_status = status; }

  Pending pending;
  Placement placement;
  pid_t pid = -1;
  int log_fd = -1;
  Clock::time_point started;
  std::optional<int> wait_status;  // it has exited and its output is read
};

std::string exit_text(int code) {
  return code > 128 && code < 128 + 65 ? signal_name(code - 128) : fmt::format("exit code {}", code);
}

class Scheduler {
public:
  Scheduler(const SweepConfig& config, const std::vector<Trial>& trials, SlotPool& pool, Journal& journal,
            std::vector<TrialOutcome> outcomes)
      : config_(config), trials_(trials), pool_(pool), journal_(journal), streaks_(pool.size()) {
    outcome_.trials = std::move(outcomes);
  }

  Result<SweepOutcome> run(const std::vector<int>& todo);

private:
  Result<void> start_ready();
  Result<void> start(Pending pending, Placement placement);
  void handle_signals();
  Result<void> finish(Running& run);
  std::string classify(int code, const std::optional<TrialResult>& result) const;
  Result<void> after_failure(const Running& run, const std::string& why);
  Result<void> exclude_if_failing(std::size_t host);
  Result<void> exclude_named(const Running& run, const std::vector<LeftOutHost>& named);
  Result<void> exclude_host(std::size_t host, const std::string& reason);
  void report_trial(const Running& run, const TrialOutcome& out, bool retrying);
  void show_progress();
  std::string trial_dir(int trial) const { return config_.dir + "/" + trial_folder(trial); }

  const SweepConfig& config_;
  const std::vector<Trial>& trials_;
  SlotPool& pool_;
  Journal& journal_;
  SweepOutcome outcome_;
  std::deque<Pending> queue_;
  std::list<Running> running_;
  ProcessSet children_;  // the running attempts' pipes and exits
  std::vector<std::vector<std::string>> streaks_;  // per host: its failures since its last success
  bool stopping_ = false;
};

Result<SweepOutcome> Scheduler::run(const std::vector<int>& todo) {
  const auto begin = Clock::now();
  for (int trial : todo) {
    queue_.push_back(Pending{trial, 0, {}});
  }
  children_.watch_fd(SignalPipe::fd());
  while (!queue_.empty() || !running_.empty()) {
    if (!stopping_) {
      if (auto started = start_ready(); !started) {
        return fail(started.error());
      }
    }
    if (running_.empty()) {
      break;  // nothing runs and nothing can start: the rest stays not run
    }
    children_.run_once(-1);
    handle_signals();
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->wait_status) {
        auto finished = finish(*it);
        it = running_.erase(it);
        if (!finished) {
          return fail(finished.error());
        }
        show_progress();
      } else {
        ++it;
      }
    }
  }
  if (config_.progress) {
    std::fputs("\n", stderr);
  }
  outcome_.seconds = seconds_between(begin, Clock::now());
  return std::move(outcome_);
}

Result<void> Scheduler::start_ready() {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (config_.max_parallel > 0 && static_cast<int>(running_.size()) >= config_.max_parallel) {
      break;
    }
    auto placed = pool_.take(config_.np, it->avoid);
    if (!placed) {
      ++it;  // a retry that waits for another host lets the trials behind it go
      continue;
    }
    Pending pending = std::move(*it);
    it = queue_.erase(it);
    if (auto started = start(std::move(pending), std::move(*placed)); !started) {
      return started;
    }
    show_progress();
  }
  return {};
}

Result<void> Scheduler::start(Pending pending, Placement placement) {
  const auto started = Clock::now();
  const Trial& trial = trials_.at(static_cast<std::size_t>(pending.trial));
  const std::string dir = trial_dir(trial.index);
  if (auto own = own_folder(dir, "sweep folder", true); !own) {
    pool_.release(placement);
    return fail(own.error());
  }
  std::error_code ec;
  for (const char* stale : {"metrics.json", k_result_name}) {
    std::filesystem::remove(dir + "/" + stale, ec);
  }
  const std::string request_path = dir + "/" + k_request_name;
  if (auto written = write_json_file(request_path, request_json(trial_request(config_, pool_, trial, placement,
                                                                               pending.attempt)));
      !written) {
    pool_.release(placement);
    return written;
  }
  auto log = open_own_file(dir + "/output.log", O_WRONLY | O_CREAT | O_APPEND, "sweep file");
  if (!log) {
    pool_.release(placement);
    return fail(log.error());
  }
  int log_fd = *log;
  const std::string hosts = host_names(pool_, placement);
  std::string header = fmt::format("--- ddl sweep: trial {} attempt {} on {} ({})\n", trial.index,
                                   pending.attempt + 1, hosts, describe(trial));
  [[maybe_unused]] bool wrote = write_fully(log_fd, header);
  SpawnSpec spec;
  spec.program = config_.ddl;
  spec.argv = {config_.ddl, "run", "--trial", request_path};
  spec.env = environment_with({});
  spec.group = ProcessGroup::new_group;  // Ctrl-C on the terminal reaches the sweep alone; it forwards
  spec.death_signal = SIGKILL;           // kill -9 of the sweep: `ddl run`'s own guarantee takes over
  SpawnResult spawned = spawn_process(spec);
  if (auto recorded = journal_.append(Json{{"event", "started"}, {"trial", trial.index},
                                           {"attempt", pending.attempt}, {"hosts", hosts}});
      !recorded) {
    if (spawned) kill_child_tree(spawned.child.pid);
    return recorded;
  }
  if (!spawned) {
    // Not even ddl itself could start: the whole sweep cannot go on.
    close_fd(log_fd);
    pool_.release(placement);
    return fail(ExitCode::launch, fmt::format("cannot start {}: {}", config_.ddl,
                                              std::strerror(spawned.failure.error)));
  }
  if (stop::first_signal() != 0 && !stopping_) {
    handle_signals();
  }
  Running& run = running_.emplace_back(std::move(pending), std::move(placement), spawned.child.pid, log_fd, started);
  WatchOptions options;
  options.drain_after_exit = std::chrono::milliseconds(0);  // what is ready at its exit, no more
  children_.add(spawned.child, run, options);
  return {};
}

void Scheduler::handle_signals() {
  for (int signo : SignalPipe::take()) {
    if (!stopping_) {
      stopping_ = true;
      outcome_.stop_signal = signo;
      print_warning(fmt::format("{}: stopping every trial{}", signal_name(signo),
                                signo == SIGINT ? " (Ctrl-C again within a second: kill them at once)" : ""));
    }
    // Forwarded each time: `ddl run` itself turns a second SIGINT within a
    // second into SIGKILL of its ranks.
    for (const Running& run : running_) {
      children_.signal(run.pid, signo, false);
    }
  }
}

// The trial's result category: from its result.json's reason when it wrote
// one, else (killed before it could) from its exit code alone.
std::string Scheduler::classify(int code, const std::optional<TrialResult>& result) const {
  const bool stopped = stopping_ && (code == 129 || code == 130 || code == 143 || code == 128 + SIGKILL);
  if (code == 0) return "ok";
  if (stopped && (!result || result->reason == "interrupted")) return "interrupted";
  if (!result) return code == to_int(ExitCode::launch) ? "launch_error" : "failed";
  return result->reason == "launch_error" || result->reason == "usage" ? "launch_error" : "failed";
}

Result<void> Scheduler::finish(Running& run) {
  close_fd(run.log_fd);
  pool_.release(run.placement);
  const double seconds = seconds_between(run.started, Clock::now());
  outcome_.busy_slot_seconds += seconds * config_.np;
  const ProcessExit how = process_exit(*run.wait_status);
  const int code = how.code;
  TrialOutcome& out = outcome_.trials.at(static_cast<std::size_t>(run.pending.trial));
  const auto result = read_result(trial_dir(run.pending.trial) + "/" + k_result_name);
  out.result = classify(code, result);
  out.exit_code = code;
  out.seconds = seconds;
  out.hosts = host_names(pool_, run.placement);
  out.attempts = run.pending.attempt + 1;
  out.metric = out.result == "ok" && config_.metric && result ? result->metric : std::nullopt;
  const bool failed = out.result == "failed" || out.result == "launch_error";
  const bool retrying = failed && !stopping_ && run.pending.attempt < config_.retries;
  const bool final = out.result == "ok" || (failed && !retrying);
  Json record{{"event", "finished"}, {"trial", out.trial},     {"attempt", run.pending.attempt},
              {"result", out.result}, {"exit_code", code},      {"seconds", seconds},
              {"hosts", out.hosts},   {"final", final}};
  record["metric"] = out.metric ? Json(*out.metric) : Json(nullptr);
  if (auto recorded = journal_.append(std::move(record)); !recorded) {
    return recorded;
  }
  report_trial(run, out, retrying);
  if (out.result == "ok") {
    for (const HostShare& share : run.placement) streaks_[share.host].clear();
  } else if (failed && result && !result->preflight_named.empty()) {
    if (auto excluded = exclude_named(run, result->preflight_named); !excluded) {
      return excluded;
    }
  } else if (failed) {
    if (auto noted = after_failure(run, exit_text(code)); !noted) {
      return noted;
    }
  }
  if (retrying) {
    Pending again{run.pending.trial, run.pending.attempt + 1, run.pending.avoid};
    for (const HostShare& share : run.placement) again.avoid.insert(share.host);
    queue_.push_front(std::move(again));
  }
  return {};
}

Result<void> Scheduler::after_failure(const Running& run, const std::string& why) {
  for (const HostShare& share : run.placement) {
    streaks_[share.host].push_back(fmt::format("trial {}: {}", run.pending.trial, why));
    if (auto excluded = exclude_if_failing(share.host); !excluded) {
      return excluded;
    }
  }
  return {};
}

// A trial whose preflight named hosts: those are excluded at once, the
// trial's other hosts are not blamed.
Result<void> Scheduler::exclude_named(const Running& run, const std::vector<LeftOutHost>& named) {
  for (const HostShare& share : run.placement) {
    const std::string& name = pool_.host(share.host).name;
    for (const LeftOutHost& host : named) {
      if (host.name == name && !pool_.excluded(share.host) && pool_.usable_slots({share.host}) >= config_.np) {
        if (auto excluded =
                exclude_host(share.host, fmt::format("trial {}'s preflight: {}", run.pending.trial, host.why));
            !excluded) {
          return excluded;
        }
      }
    }
  }
  return {};
}

// Never the last hosts a trial fits on: a trial that fails everywhere is
// then the trial's fault, and the others still run.
Result<void> Scheduler::exclude_if_failing(std::size_t host) {
  const auto& streak = streaks_[host];
  if (pool_.excluded(host) || streak.size() < k_failures_to_exclude ||
      pool_.usable_slots({host}) < config_.np) {
    return {};
  }
  std::string reason = fmt::format("{} trials failed there in a row (", streak.size());
  for (std::size_t i = 0; i < streak.size(); ++i) {
    reason += (i ? "; " : "") + streak[i];
  }
  reason += ")";
  return exclude_host(host, reason);
}

Result<void> Scheduler::exclude_host(std::size_t host, const std::string& reason) {
  pool_.exclude(host);
  const std::string& name = pool_.host(host).name;
  outcome_.excluded.emplace_back(name, reason);
  if (config_.progress) std::fputs("\n", stderr);
  print_warning(fmt::format("host {} excluded for the rest of the sweep: {}", name, reason));
  return journal_.append(Json{{"event", "excluded"}, {"host", name}, {"reason", reason}});
}

void Scheduler::report_trial(const Running& run, const TrialOutcome& out, bool retrying) {
  if (config_.quiet || config_.progress) {
    if (config_.progress && out.result != "ok" && out.result != "interrupted") {
      std::fputs("\n", stderr);
    } else {
      return;
    }
  }
  std::string line = fmt::format("ddl: trial {} {} in {:.1f}s on {}", out.trial,
                                 out.result == "ok" ? "ok" : out.result + " (" + exit_text(out.exit_code) + ")",
                                 out.seconds, out.hosts);
  if (out.metric) {
    line += fmt::format(": {}={}", config_.metric->name, param_text(*out.metric));
  }
  line += fmt::format(" ({})", describe(trials_.at(static_cast<std::size_t>(out.trial))));
  if (retrying) {
    line += fmt::format("; retrying, attempt {} of {}", run.pending.attempt + 2, config_.retries + 1);
  }
  if (out.result != "ok" && out.result != "interrupted") {
    line += fmt::format("; see {}/output.log", trial_dir(out.trial));
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

void Scheduler::show_progress() {
  if (!config_.progress) {
    return;
  }
  int done = 0;
  int failed = 0;
  const TrialOutcome* best = nullptr;
  for (const TrialOutcome& out : outcome_.trials) {
    done += out.result == "ok" || out.result == "failed" || out.result == "launch_error";
    failed += out.result == "failed" || out.result == "launch_error";
    if (out.metric && (!best || (config_.metric->maximize ? *out.metric > *best->metric : *out.metric < *best->metric))) {
      best = &out;
    }
  }
  std::string line = fmt::format("ddl sweep: {}/{} done, {} running, {} failed", done, outcome_.trials.size(),
                                 running_.size(), failed);
  if (best) {
    line += fmt::format(", best {}={} (trial {})", config_.metric->name, param_text(*best->metric), best->trial);
  }
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

} // namespace

std::string trial_folder(int trial) { return fmt::format("trial-{:04}", trial); }

std::string attempt_log_dir(const std::string& trial_dir, int attempt) {
  return fmt::format("{}/attempt-{}", trial_dir, attempt);
}

TrialRequest trial_request(const SweepConfig& config, const SlotPool& pool, const Trial& trial,
                           const Placement& placement, int attempt) {
  TrialRequest request;
  request.trial = trial.index;
  request.attempt = attempt;
  request.trial_dir = config.dir + "/" + trial_folder(trial.index);
  request.job = config.job;
  request.backend = config.backend;
  request.hosts = pool.specs(placement);
  request.np = config.np;
  request.parameters = trial.params;
  request.env = trial_env(trial, request.trial_dir);
  // One host: the GPUs of its slots for all its ranks (several hosts are held
  // whole; their ranks are bound as `ddl run` binds them).
  if (placement.size() == 1) {
    if (auto gpus = pool.gpus_of(placement.front()); !gpus.empty()) {
      std::string ids;
      for (int gpu : gpus) ids += (ids.empty() ? "" : ",") + std::to_string(gpu);
      request.env.emplace_back("CUDA_VISIBLE_DEVICES", ids);
    }
  }
  request.command = substitute(config.command, trial, config.shell);
  request.log_dir = attempt_log_dir(request.trial_dir, attempt);
  request.result = request.trial_dir + "/" + k_result_name;
  request.ssh_broker = config.ssh_broker;
  return request;
}

Result<SweepOutcome> run_sweep(const SweepConfig& config, const std::vector<Trial>& trials,
                               const std::vector<int>& todo, std::vector<TrialOutcome> done, SlotPool& pool,
                               Journal& journal) {
  Scheduler scheduler(config, trials, pool, journal, std::move(done));
  return scheduler.run(todo);
}

} // namespace ddl::sweep
