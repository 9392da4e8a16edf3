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

// Elastic: the plan of the next attempt on the hosts left, its launches,
// and the backend prepared for them; `not_enough` instead says why there is
// none (fewer than min_np slots left).
struct NextRound {
  const Plan* plan = nullptr;
  std::vector<RankLaunch> launches;
  std::string not_enough;
};
using Replanner = std::function<Result<NextRound>(int attempt, RestartPolicy& policy)>;

struct SupervisorOptions {
  std::optional<Millis> timeout;  // the whole job, all attempts
  // When the timeout ends the job (stop::deadline(): it runs from the job's
  // start); nullopt: `timeout` after the backend is prepared.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  int max_restarts = 0;
  Millis grace{10'000};           // between SIGTERM and SIGKILL
  OutputOptions output;
  // Asked about every 100 ms while ranks run: an Error stops the gang (TERM,
  // grace, KILL) and is what supervise() returns (the rendezvous' exit-4 rule).
  std::function<std::optional<Error>()> watchdog;
  // Told what the gang does, for `ddl ps`: "running" when an attempt starts
  // (0 first), "stopping" once it is being stopped.
  std::function<void(std::string_view state, int attempt)> on_state;
  // Signals asked for the ranks from outside (`ddl signal`), each forwarded
  // to every running rank; nullptr: none.
  RankSignalQueue* rank_signals = nullptr;
  // After a failed attempt: restart, restart elsewhere, or stop. nullptr:
  // max_restarts alone.
  RestartPolicy* policy = nullptr;
  // Called for Verdict::replan (after the backend is shut down).
  Replanner replan;
  // [job] stop_signal (what ddl sends where it used to send SIGTERM),
  // checkpoint_signal and checkpoint_grace (first, on SIGTERM to ddl and the
  // timeout), requeue_exit_code.
  StopSection stop;
  // [watchdog]; with `progress` set (the board the ranks' lines and the
  // rendezvous' heartbeats feed), a stall dumps the ranks' stacks and ends
  // the attempt (exit 5; restarts like a failure).
  WatchdogSection hang;
  std::shared_ptr<ProgressBoard> progress;
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
Result<int> supervise(Backend& backend, const Plan& plan, const LaunchBuilder& build,
                      const SupervisorOptions& options);

} // namespace ddl
