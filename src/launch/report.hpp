// SPDX-License-Identifier: MIT
#pragma once

// How a job's end is reported: stop reason -> summary event fields and exit
// code (DESIGN.md "Gang semantics and exit codes"), and the text ddl prints
// about a failure.

#include <deque>
#include <optional>
#include <string>

#include "src/launch/backend.hpp"
#include "src/launch/error_file.hpp"
#include "src/launch/output.hpp"
#include "src/util/error.hpp"

namespace ddl {

// Why an attempt ended.
// `watchdog` is the rendezvous' exit-4 rule; `stalled` the hang watchdog's.
enum class StopReason { none, failed, timeout, signal, stdout_closed, launch_error, watchdog, stalled };

// The first rank of an attempt to fail.
struct FirstFailure {
  int rank = -1;
  RankExit how;
  double elapsed_s = 0;
};

// The end of the last attempt, as the supervisor saw it.
struct AttemptEnd {
  StopReason reason = StopReason::none;
  int stop_signal = 0;      // StopReason::signal: the signal ddl got
  FirstFailure first;
  std::string failed_host;  // the host of first.rank
  std::optional<RankError> rank_error;  // first.rank's torch error file
  Error error;              // launch_error and watchdog: ddl's own error
  std::optional<int> requeue_exit_code;  // job.requeue_exit_code
  bool checkpointed = false;  // every rank exited within checkpoint_grace
};

// The summary event and exit code: ok 0; failed: the rank's code (128+N for
// signal N); timeout 124; interrupted 128+signal (141 when stdout closed);
// launch_error and rendezvous_timeout: the error's code (3, 4); stalled 5;
// requeue: a rank exited with job.requeue_exit_code, which is ddl's code too.
JobSummary job_summary(const AttemptEnd& end, int attempts, double elapsed_s);

// "rank 2 on h3 exited with code 1 after 0.52s" / "was killed by SIGKILL".
std::string describe_failure(const RankLaunch& launch, const FirstFailure& first);

// The summary printed when the job fails: the first failure, then the last
// lines its rank wrote on stderr, then what its torch error file says
// (message and traceback) when it wrote one.
std::string failure_summary(const RankLaunch& launch, const FirstFailure& first,
                            const std::deque<std::string>& stderr_tail, int attempts,
                            const std::optional<RankError>& error = std::nullopt);

// "ddl: rank 1 on h2 exited with code 3 after 1s; restarting (DDL_ATTEMPT=1,
// restart 1 of 2)": attempts as the ranks count them (0 first).
std::string restart_message(const RankLaunch& launch, const FirstFailure& first, int next_attempt,
                            int max_restarts);

// Elastic, after a host was lost: "ddl: rank 1 on h2 could not run: ...;
// restarting on the hosts left (DDL_ATTEMPT=1), in 2s"; with no host of
// the attempt left, "...; no host of this attempt is left: running the host
// source again (DDL_ATTEMPT=1)".
std::string elastic_restart_message(const RankLaunch& launch, const FirstFailure& first, int next_attempt,
                                    Millis wait, bool hosts_left);

// "ddl: error: timed out after 2h"; "ddl: error: timed out" without a timeout.
std::string timeout_message(std::optional<Millis> timeout);

// "ddl: interrupted by SIGINT: stopped the 4 ranks (exit 130)\n": the one
// line when a signal to ddl (Ctrl-C) ends the job, as torchrun prints one.
std::string interrupted_message(int signo, int ranks);

// "0.52s", "12.3s", "5m12s", "1h02m".
std::string format_elapsed(double seconds);

} // namespace ddl
