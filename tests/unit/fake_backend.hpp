// SPDX-License-Identifier: MIT
// TEST DOUBLE: a Backend (src/launch/backend.hpp) whose ranks are scripted,
// not run, so that the gang semantics of supervise() can be tested without
// processes, hosts or timing luck (ninja's FakeCommandRunner, in spirit).
//
// Every rank follows a RankScript: it writes its output, then ends by itself
// after `runs_for` (an exit code or a signal), or never (`forever`); or it
// fails to start. Signals obey the script: TERM/INT/HUP end a rank unless it
// ignores them, KILL always does. The fake records every launch, every
// signal and which ranks still run, for the test to check afterwards.
//
// It is a PerRankBackend (backends/per_rank_backend.hpp), as the local, ssh
// and kubernetes backends are, so the tests run that skeleton's start and
// signal_all too. This is the only file of the tests that implements the
// Backend interface: when that interface changes, adapt the overrides below
// and nothing else.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/per_rank_backend.hpp"
#include "src/util/error.hpp"

namespace ddl::test {

using FakeClock = std::chrono::steady_clock;

// What one rank of one attempt does.
struct RankScript {
  // Written at start, chunk by chunk, in order (chunks need not be lines).
  std::vector<std::pair<Stream, std::string>> output;
  // How long it runs before it ends by itself; ignored when `forever`.
  std::chrono::milliseconds runs_for{0};
  bool forever = false;
  int exit_code = 0;   // how it ends by itself: this code ...
  int exit_signal = 0; // ... or, when non-zero, killed by this signal
  // Only SIGKILL ends it (a rank that traps TERM, INT and HUP).
  bool ignores_term = false;
  // Non-empty: start() fails with ExitCode::launch and this message.
  std::string start_error;
  // Non-empty: it starts, then ends at once with RankExit::launch_error set
  // (the connection or `kubectl exec` failed before the command ran) and
  // RankExit::code = `exit_code`.
  std::string lost_error;

  // Shorthands for the common scripts.
  static RankScript exits(int code, std::chrono::milliseconds after = {}) {
    RankScript s;
    s.exit_code = code;
    s.runs_for = after;
    return s;
  }
  static RankScript killed_by(int signo, std::chrono::milliseconds after = {}) {
    RankScript s;
    s.exit_signal = signo;
    s.runs_for = after;
    return s;
  }
  static RankScript runs_forever() {
    RankScript s;
    s.forever = true;
    return s;
  }
  static RankScript cannot_start(std::string message) {
    RankScript s;
    s.start_error = std::move(message);
    return s;
  }
};

// A signal as the fake received it.
struct SignalRecord {
  int rank = 0;
  int attempt = 0;
  int signo = 0;
  FakeClock::time_point when;
};

// A start() as the fake received it.
struct LaunchRecord {
  int rank = 0;
  int attempt = 0;  // counted by the fake: the n-th start of this rank
  std::vector<std::string> argv;
  EnvList env;
  bool started = false;  // false: start() failed
  FakeClock::time_point when;
};

// A rank's end as the fake reported it.
struct ExitRecord {
  int rank = 0;
  int attempt = 0;
  RankExit how;
  FakeClock::time_point when;
};

class FakeBackend final : public PerRankBackend {
public:
  // Which script rank `rank` follows in attempt `attempt` (0 first).
  using Scripter = std::function<RankScript(int rank, int attempt)>;

  explicit FakeBackend(Scripter scripter) : m_scripter(std::move(scripter)) {}
  ~FakeBackend() override {
    shutdown();
  }
  FakeBackend(const FakeBackend&) = delete;
  FakeBackend& operator=(const FakeBackend&) = delete;

  // Non-empty: prepare() fails with ExitCode::launch and this message.
  void fail_prepare(std::string message) { m_prepare_error = std::move(message); }

  // ---- The Backend interface (the only place the tests depend on it) ----

  std::string_view name() const override { return "fake"; }

  Result<void> prepare_gang(const Plan& plan, std::span<const RankLaunch> /*launches*/) override {
    std::lock_guard lock(m_mutex);
    ++m_prepared;
    m_prepared_world_size = plan.world_size;
    if (!m_prepare_error.empty()) {
      return fail(ExitCode::launch, m_prepare_error);
    }
    return {};
  }

  // No host to reach.
  std::vector<std::size_t> preflight_units(const Plan& /*plan*/) override { return {}; }

  Result<void> start_rank(const RankLaunch& launch, RankEvents& events) override {
    return start_scripted(launch.rank, launch.argv, launch.env, events);
  }

  void signal_rank(int rank, int signo) override { deliver(rank, signo); }

  // Ends what still runs without reporting it: the supervisor (and its
  // RankEvents) may be gone by now. Such ranks are listed by left_at_shutdown().
  void shutdown() override {
    {
      std::lock_guard lock(m_mutex);
      ++m_shutdowns;
      for (auto& instance : m_instances) {
        if (!instance->ended) {
          instance->ended = true;
          m_left_at_shutdown.push_back(label(*instance));
        }
      }
      m_stopping = true;
    }
    m_wake.notify_all();
    if (m_worker.joinable()) {
      m_worker.join();
    }
  }

  // ---- What the test checks afterwards ----

  std::vector<LaunchRecord> launches() const {
    std::lock_guard lock(m_mutex);
    return m_launches;
  }
  std::vector<SignalRecord> signals() const {
    std::lock_guard lock(m_mutex);
    return m_signals;
  }
  // The signals that rank `rank` received in attempt `attempt`, in order.
  std::vector<int> signals_of(int rank, int attempt = 0) const {
    std::lock_guard lock(m_mutex);
    std::vector<int> out;
    for (const auto& s : m_signals) {
      if (s.rank == rank && s.attempt == attempt) {
        out.push_back(s.signo);
      }
    }
    return out;
  }
  std::vector<ExitRecord> exits() const {
    std::lock_guard lock(m_mutex);
    return m_exits;
  }
  // Ranks started and not yet reported as ended ("rank@attempt").
  std::vector<std::string> running() const {
    std::lock_guard lock(m_mutex);
    std::vector<std::string> out;
    for (const auto& instance : m_instances) {
      if (!instance->ended) {
        out.push_back(label(*instance));
      }
    }
    return out;
  }
  // Ranks that still ran when shutdown() was called ("rank@attempt").
  std::vector<std::string> left_at_shutdown() const {
    std::lock_guard lock(m_mutex);
    return m_left_at_shutdown;
  }
  int starts_of(int rank) const {
    std::lock_guard lock(m_mutex);
    return static_cast<int>(std::count_if(m_launches.begin(), m_launches.end(),
                                          [&](const LaunchRecord& r) { return r.rank == rank && r.started; }));
  }
  int prepared() const {
    std::lock_guard lock(m_mutex);
    return m_prepared;
  }
  int prepared_world_size() const {
    std::lock_guard lock(m_mutex);
    return m_prepared_world_size;
  }
  int shutdowns() const {
    std::lock_guard lock(m_mutex);
    return m_shutdowns;
  }
  // Blocks until `n` ranks run at once, or `limit` passes; true when they do.
  bool wait_running(std::size_t n, std::chrono::milliseconds limit) const {
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(lock, limit, [&] { return running_locked() >= n; });
  }

private:
  // One rank of one attempt.
  struct Instance {
    int rank = 0;
    int attempt = 0;
    RankScript script;
    RankEvents* events = nullptr;
    FakeClock::time_point ends_at;
    bool output_done = false;
    bool ended = false;
    std::optional<RankExit> forced;  // set by a signal that ends it
  };

  Result<void> start_scripted(int rank, const std::vector<std::string>& argv, const EnvList& env,
                              RankEvents& events) {
    std::unique_lock lock(m_mutex);
    int attempt = static_cast<int>(std::count_if(m_launches.begin(), m_launches.end(),
                                                 [&](const LaunchRecord& r) { return r.rank == rank; }));
    RankScript script = m_scripter(rank, attempt);
    m_launches.push_back(LaunchRecord{rank, attempt, argv, env, script.start_error.empty(), FakeClock::now()});
    if (!script.start_error.empty()) {
      return fail(ExitCode::launch, script.start_error);
    }
    auto instance = std::make_unique<Instance>();
    instance->rank = rank;
    instance->attempt = attempt;
    instance->events = &events;
    instance->ends_at = FakeClock::now() + script.runs_for;
    if (!script.lost_error.empty()) {
      instance->forced = RankExit{script.exit_code, 0, script.lost_error};
    }
    instance->script = std::move(script);
    m_instances.push_back(std::move(instance));
    if (!m_worker.joinable()) {
      m_stopping = false;
      m_worker = std::thread([this] { work(); });
    }
    lock.unlock();
    events.started(rank, 10'000 + 100 * attempt + rank);
    m_wake.notify_all();
    m_changed.notify_all();
    return {};
  }

  void deliver(int rank, int signo) {
    {
      std::lock_guard lock(m_mutex);
      Instance* current = nullptr;
      for (auto& instance : m_instances) {
        if (instance->rank == rank && (current == nullptr || instance->attempt > current->attempt)) {
          current = instance.get();
        }
      }
      m_signals.push_back(SignalRecord{rank, current != nullptr ? current->attempt : -1, signo, FakeClock::now()});
      if (current == nullptr || current->ended || current->forced) {
        return;
      }
      bool stops = signo == SIGTERM || signo == SIGINT || signo == SIGHUP;
      if (signo == SIGKILL || (stops && !current->script.ignores_term)) {
        current->forced = RankExit{128 + signo, signo, {}};
      }
    }
    m_wake.notify_all();
  }

  // The ranks' "processes": one thread that writes their output and reports
  // their ends, as a real backend's reader threads do.
  void work() {
    std::unique_lock lock(m_mutex);
    for (;;) {
      auto next = FakeClock::time_point::max();
      bool all_ended = true;
      // Whenever the lock was let go (to call the supervisor), anything may
      // have changed: scan again before sleeping, so no wake-up is lost.
      bool rescan = false;
      for (std::size_t i = 0; i < m_instances.size() && !rescan; ++i) {
        Instance& instance = *m_instances[i];
        if (instance.ended) {
          continue;
        }
        all_ended = false;
        if (!instance.output_done) {
          instance.output_done = true;
          auto output = instance.script.output;
          RankEvents* events = instance.events;
          lock.unlock();
          for (const auto& [stream, bytes] : output) {
            events->output(instance.rank, stream, bytes);
          }
          lock.lock();
          rescan = true;
          continue;
        }
        bool by_itself = !instance.script.forever && FakeClock::now() >= instance.ends_at;
        if (instance.forced || by_itself) {
          RankExit how = instance.forced ? *instance.forced : scripted_exit(instance.script);
          instance.ended = true;
          m_exits.push_back(ExitRecord{instance.rank, instance.attempt, how, FakeClock::now()});
          RankEvents* events = instance.events;
          lock.unlock();
          events->exited(instance.rank, how);
          lock.lock();
          m_changed.notify_all();
          rescan = true;
          continue;
        }
        if (!instance.script.forever) {
          next = std::min(next, instance.ends_at);
        }
      }
      if (rescan) {
        continue;
      }
      if (m_stopping && all_ended) {
        return;
      }
      if (next == FakeClock::time_point::max()) {
        m_wake.wait(lock);
      } else {
        m_wake.wait_until(lock, next);
      }
    }
  }

  static std::string label(const Instance& instance) {
    return std::to_string(instance.rank) + "@" + std::to_string(instance.attempt);
  }

  static RankExit scripted_exit(const RankScript& script) {
    if (script.exit_signal != 0) {
      return RankExit{128 + script.exit_signal, script.exit_signal, {}};
    }
    return RankExit{script.exit_code, 0, {}};
  }

  std::size_t running_locked() const {
    return static_cast<std::size_t>(std::count_if(m_instances.begin(), m_instances.end(),
                                                  [](const auto& i) { return !i->ended; }));
  }

  Scripter m_scripter;
  std::string m_prepare_error;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;             // to the worker: something changed
  mutable std::condition_variable m_changed;  // to the test: a rank started or ended
  std::vector<std::unique_ptr<Instance>> m_instances;
  std::vector<LaunchRecord> m_launches;
  std::vector<SignalRecord> m_signals;
  std::vector<ExitRecord> m_exits;
  std::vector<std::string> m_left_at_shutdown;
  std::thread m_worker;
  bool m_stopping = false;
  int m_prepared = 0;
  int m_prepared_world_size = 0;
  int m_shutdowns = 0;
};

} // namespace ddl::test
