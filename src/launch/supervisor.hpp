// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/util/error.hpp"
#include "src/launch/output.hpp"
#include "src/launch/rank_signals.hpp"
#include "src/launch/report.hpp"
#include "src/launch/restart_policy.hpp"
#include "src/launch/watchdog.hpp"
#include "src/plan/plan.hpp"

namespace ddl {

// Builds the launches of one attempt (the env counts attempts).
using LaunchBuilder = std::function<Result<std::vector<RankLaunch>>(int attempt)>;

// Elastic: the launches of the next attempt on the hosts left (the new
// round's plan is Rounds::plan()), the backend prepared for them;
// `not_enough` instead says why there is none (fewer than min_np slots left).
struct NextRound {
  std::vector<RankLaunch> launches;
  std::string not_enough;
};

// What supervise() asks of the job it runs, round by round (a round: one
// plan on its hosts, with its own rendezvous and master port). supervise()
// owns no plan: it asks for the current one, and a new round (elastic) may
// replace it between attempts.
class Rounds {
public:
  virtual ~Rounds() = default;
  // The plan of the round now running.
  virtual const Plan& plan() const = 0;
  // The launches of `attempt` on that plan (the env counts attempts).
  virtual Result<std::vector<RankLaunch>> launches(int attempt) = 0;
  // Called for Verdict::replan (after the backend is shut down): a new
  // round on the hosts left, its first launches, the backend prepared.
  virtual Result<NextRound> next_round(int attempt, RestartPolicy& policy) = 0;
  // Asked about every 100 ms while ranks run: an Error stops the gang
  // (TERM, grace, KILL) and is what supervise() returns (the rendezvous'
  // exit-4 rule).
  virtual std::optional<Error> overdue() = 0;
  // The round's hang-watchdog board (the ranks' lines and the rendezvous'
  // heartbeats feed it); nullptr without [watchdog]. Read once per attempt.
  virtual ProgressBoard* progress() = 0;
};

// One plan for every attempt, its launches from `build`: no re-plan, no
// rendezvous deadline, no hang board.
class FixedRound final : public Rounds {
public:
  FixedRound(const Plan& plan, LaunchBuilder build,
             std::function<std::optional<Error>()> overdue = {})
      : plan_(plan), build_(std::move(build)), overdue_(std::move(overdue)) {}
  const Plan& plan() const override { return plan_; }
  Result<std::vector<RankLaunch>> launches(int attempt) override { return build_(attempt); }
  Result<NextRound> next_round(int, RestartPolicy&) override { return NextRound{{}, "no hosts to plan again"}; }
  std::optional<Error> overdue() override { return overdue_ ? overdue_() : std::nullopt; }
  ProgressBoard* progress() override { return nullptr; }

private:
  const Plan& plan_;
  LaunchBuilder build_;
  std::function<std::optional<Error>()> overdue_;
};

struct SupervisorOptions {
  std::optional<Millis> timeout;  // the whole job, all attempts
  // When the timeout ends the job (stop::deadline(): it runs from the job's
  // start); nullopt: `timeout` after the backend is prepared.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  int max_restarts = 0;
  Millis grace{10'000};           // between SIGTERM and SIGKILL
  OutputOptions output;
  // Told what the gang does, for `ddl ps`: "running" when an attempt starts
  // (0 first), "stopping" once it is being stopped.
  std::function<void(std::string_view state, int attempt)> on_state;
  // Signals asked for the ranks from outside (`ddl signal`), each forwarded
  // to every running rank; nullptr: none.
  RankSignalQueue* rank_signals = nullptr;
  // After a failed attempt: restart, restart elsewhere (Rounds::next_round),
  // or stop. nullptr: max_restarts alone.
  RestartPolicy* policy = nullptr;
  // [job] stop_signal (what ddl sends where it used to send SIGTERM),
  // checkpoint_signal and checkpoint_grace (first, on SIGTERM to ddl and the
  // timeout), requeue_exit_code.
  StopSection stop;
  // [watchdog]; with a board (Rounds::progress()), a stall dumps the ranks'
  // stacks and ends the attempt (exit 5; restarts like a failure).
  WatchdogSection hang;
  // The rank whose clean end ends the job ([tensorflow] success = "chief"):
  // the ranks still running get the stop signal, and how they end is no
  // failure. -1: every rank must end.
  int job_ending_rank = -1;
};


// Runs the gang to its end (DESIGN.md "Gang semantics and exit codes"):
// the first rank to fail ends the attempt and the others get SIGTERM, then
// SIGKILL after `grace`; restarts; --timeout; SIGINT/SIGTERM/SIGHUP to ddl
// are forwarded (a second SIGINT within a second kills at once), and so are
// SIGUSR1, SIGUSR2, SIGCONT and SIGTSTP (as SIGSTOP, like mpirun). Returns
// the exit code of the job (0, the first failure's code or 128+signal, 124,
// 130, 143, 141 when stdout closed); errors of ddl itself (launch) come back
// as Error, after every started rank is gone. Call from the main thread.
Result<int> supervise(Backend& backend, Rounds& rounds, const SupervisorOptions& options);

} // namespace ddl
