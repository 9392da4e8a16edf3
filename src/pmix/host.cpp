// SPDX-License-Identifier: MIT
#include "src/pmix/host.hpp"

#include <chrono>
#include <csignal>
#include <cstring>
#include <list>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "src/pmix/host_events.hpp"
#include "src/pmix/host_outcome.hpp"
#include "src/pmix/line_relay.hpp"
#include "src/pmix/server.hpp"
#include "src/util/lifeline.hpp"
#include "src/util/process.hpp"
#include "src/util/process_set.hpp"
#include "src/util/signals.hpp"

namespace ddl::pmix {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int k_poll_ms = 100;
constexpr Millis k_drain_after_exit{2000};

// One started rank, watched by the host's ProcessSet: its output relayed by
// line, its exit kept for the supervising loop's next turn.
struct LocalRank final : ChildEvents {
  LocalRank(int rank_, const ChildProcess& started, std::optional<int> tag)
      : rank(rank_), child(started), out(-1, 1, tag), err(-1, 2, tag) {}

  void output(OutputStream stream, std::string_view bytes) override {
    (stream == OutputStream::out ? out : err).feed(bytes);
  }
  void exited(int wait_status) override {
    reaped = true;
    exit = process_exit(wait_status);
  }
  void ended(int /*wait_status*/) override {
    out.finish();
    err.finish();
  }

  int rank = 0;
  ChildProcess child;  // its pipes go to the ProcessSet
  bool reaped = false;
  std::optional<ProcessExit> exit;  // reaped, not yet told to the outcome
  LineRelay out;
  LineRelay err;
};

ServerEvents server_events(const std::shared_ptr<HostEventBox>& box, FenceExchange& exchange) {
  using Kind = HostEvent::Kind;
  ServerEvents events;
  events.connected = [box](int rank) { box->push({Kind::connected, rank, 0, ""}); };
  events.finalized = [box](int rank) { box->push({Kind::finalized, rank, 0, ""}); };
  events.aborted = [box](int rank, int status, std::string message) {
    box->push({Kind::aborted, rank, status, std::move(message)});
  };
  events.fence = [box, &exchange](std::string mine, FenceDone done) {
    exchange.submit(std::move(mine), [box, done = std::move(done)](Result<std::string> all) {
      if (!all) {
        box->push({Kind::failed, 0, to_int(all.error().code),
                   "the PMIx fence across hosts failed: " + all.error().message});
      }
      done(std::move(all));
    });
  };
  return events;
}

// `env` without PMIX_* entries: a rank gets its PMIx variables from this
// server alone, never those of a PMIx job ddl itself runs in.
std::vector<std::string> without_pmix(const std::vector<std::string>& env) {
  std::vector<std::string> kept;
  for (const auto& entry : env) {
    if (!entry.starts_with("PMIX_")) {
      kept.push_back(entry);
    }
  }
  return kept;
}

std::string spawn_error(const HostRun& run, int rank, const SpawnFailure& failure) {
  return fmt::format("cannot start rank {} ({}): {}", rank, run.argv.front(),
                     std::strerror(failure.error));
}

// Starts every local rank; the first that cannot start is a failure (and
// the ranks after it are not started).
std::list<LocalRank> start_ranks(const HostRun& run, const Server& server, Lifeline& lifeline,
                                 HostOutcome& outcome) {
  std::list<LocalRank> ranks;
  const auto& layout = run.layout;
  auto base_env = without_pmix(run.env);
  for (int rank = layout.first_local_rank();
       rank < layout.first_local_rank() + layout.local_ranks() && !outcome.failing(); ++rank) {
    auto pmix_env = server.rank_env(rank);
    if (!pmix_env) {
      outcome.failed(to_int(pmix_env.error().code), pmix_env.error().message);
      break;
    }
    SpawnSpec spec;
    spec.argv = run.argv;
    auto own = rank_identity_env(layout, rank);
    own.insert(own.end(), pmix_env->begin(), pmix_env->end());
    spec.env = environment_with(base_env, own);
    spec.group = ProcessGroup::new_group;
    spec.death_signal = SIGKILL;
    auto started = spawn_process(spec);
    if (!started) {
      outcome.failed(to_int(ExitCode::launch), spawn_error(run, rank, started.failure));
      break;
    }
    lifeline.watch(started.child.pid);
    close_fd(started.child.in_fd);
    const std::optional<int> tag = run.rank_prefix ? std::optional<int>(rank) : std::nullopt;
    ranks.emplace_back(rank, started.child, tag);
  }
  // Ranks never started count as ended, so that the host can finish.
  for (int rank = layout.first_local_rank() + static_cast<int>(ranks.size());
       rank < layout.first_local_rank() + layout.local_ranks(); ++rank) {
    outcome.exited(rank, ProcessExit{});
  }
  return ranks;
}

void apply(const HostEvent& event, HostOutcome& outcome) {
  switch (event.kind) {
  case HostEvent::Kind::connected: outcome.connected(event.rank); break;
  case HostEvent::Kind::finalized: outcome.finalized(event.rank); break;
  case HostEvent::Kind::aborted: outcome.aborted(event.rank, event.status, event.message); break;
  case HostEvent::Kind::failed: outcome.failed(event.status, event.message); break;
  }
}

// The supervising loop's state between turns.
class Supervisor {
public:
  Supervisor(std::list<LocalRank>& ranks, HostEventBox& box, HostOutcome& outcome, Millis grace)
      : m_ranks(ranks), m_box(box), m_outcome(outcome), m_grace(grace) {
    for (auto& rank : m_ranks) {
      m_children.add(rank.child, rank);
    }
    m_children.watch_fd(m_box.fd());
    m_children.watch_fd(stop::fd());
  }

  bool told_to_stop() const { return m_told_to_stop; }

  void run() {
    while (!finished()) {
      // Once the stop is being handled its fd stays readable: left out then.
      if (m_outcome.failing() && !m_stop_unwatched) {
        m_children.unwatch_fd(stop::fd());
        m_stop_unwatched = true;
      }
      m_children.run_once(k_poll_ms);
      // Reaped before the events are read: an abort or a finalize, told
      // before the rank could exit, is then always seen before its exit.
      auto exits = take_exits();
      for (const auto& event : m_box.take()) {
        apply(event, m_outcome);
      }
      for (const auto& [rank, how] : exits) {
        m_outcome.exited(rank, how);
      }
      stop_when_asked();
      end_ranks_when_failing();
    }
  }

private:
  bool finished() {
    if (!m_outcome.all_exited()) {
      return false;
    }
    if (!m_draining) {
      signal_groups(SIGKILL, true);  // what a rank left behind in its group
      m_draining = true;
      m_drain_until = Clock::now() + k_drain_after_exit;
    }
    // Every rank has ended once its pipes are closed too (or the drain is over).
    return m_children.size() == 0 || Clock::now() >= m_drain_until;
  }

  // The exits the last turn reaped.
  std::vector<std::pair<int, ProcessExit>> take_exits() {
    std::vector<std::pair<int, ProcessExit>> exits;
    for (auto& rank : m_ranks) {
      if (rank.exit) {
        exits.emplace_back(rank.rank, *std::exchange(rank.exit, std::nullopt));
      }
    }
    return exits;
  }

  void stop_when_asked() {
    if (stop::requested() && !m_outcome.failing()) {
      Error why = stop::error("running the ranks");
      m_outcome.failed(to_int(why.code), why.message);
      m_told_to_stop = true;
      m_stop_signal = stop::first_signal() != 0 ? stop::first_signal() : SIGTERM;
    }
  }

  void end_ranks_when_failing() {
    if (!m_outcome.failing()) {
      return;
    }
    if (!m_stopping) {
      signal_groups(m_stop_signal, false);
      m_stopping = true;
      m_kill_at = Clock::now() + m_grace;
    } else if (!m_killed && Clock::now() >= m_kill_at) {
      signal_groups(SIGKILL, false);
      m_killed = true;
    }
  }

  // Each rank's process group (`with_reaped`: also of ranks already gone).
  void signal_groups(int signo, bool with_reaped) {
    for (const auto& rank : m_ranks) {
      if (!rank.reaped || with_reaped) {
        ::kill(-rank.child.pid, signo);
      }
    }
  }

  std::list<LocalRank>& m_ranks;
  ProcessSet m_children;  // the ranks' pipes and exits
  bool m_stop_unwatched = false;
  HostEventBox& m_box;
  HostOutcome& m_outcome;
  Millis m_grace;
  int m_stop_signal = SIGTERM;
  bool m_told_to_stop = false;
  // Plain time points beside flags: gcc's -Wmaybe-uninitialized misreads
  // an optional's payload here once this class is inlined.
  bool m_stopping = false;
  Clock::time_point m_kill_at{};
  bool m_killed = false;
  bool m_draining = false;
  Clock::time_point m_drain_until{};
};

} // namespace

Result<HostResult> run_host(const HostRun& run) {
  if (run.argv.empty()) {
    return fail(ExitCode::usage, "no program to run on the PMIx host");
  }
  auto box = std::make_shared<HostEventBox>();
  if (box->fd() < 0) {
    return fail(ExitCode::launch, std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  Lifeline lifeline;
  if (auto started = lifeline.start(); !started) {
    return fail(started.error());
  }
  FenceExchange exchange(run.allgather);
  auto server = Server::start(run.layout, server_events(box, exchange));
  if (!server) {
    return fail(server.error());
  }
  HostOutcome outcome(run.layout.first_local_rank(), run.layout.local_ranks());
  auto ranks = start_ranks(run, **server, lifeline, outcome);
  Supervisor supervisor(ranks, *box, outcome, run.grace);
  supervisor.run();
  for (const auto& rank : ranks) {
    lifeline.forget(rank.child.pid);
  }
  return HostResult{outcome.exit_code(), outcome.reason(), supervisor.told_to_stop()};
}

} // namespace ddl::pmix
