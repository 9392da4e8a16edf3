// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <csignal>

#include "src/launch/report.hpp"

using namespace ddl;

namespace {

AttemptEnd ended(StopReason reason) {
  AttemptEnd end;
  end.reason = reason;
  return end;
}

} // namespace

TEST_CASE("report: each stop reason has its result and exit code", "[report]") {
  CHECK(job_summary(ended(StopReason::none), 1, 0).exit_code == 0);
  CHECK(job_summary(ended(StopReason::none), 1, 0).result == "ok");
  CHECK(job_summary(ended(StopReason::timeout), 1, 0).exit_code == 124);
  CHECK(job_summary(ended(StopReason::timeout), 1, 0).result == "timeout");
  AttemptEnd interrupted = ended(StopReason::signal);
  interrupted.stop_signal = SIGINT;
  CHECK(job_summary(interrupted, 1, 0).exit_code == 130);
  CHECK(job_summary(interrupted, 1, 0).result == "interrupted");
  CHECK(job_summary(ended(StopReason::stdout_closed), 1, 0).exit_code == 141);
  AttemptEnd launch = ended(StopReason::launch_error);
  launch.error = Error{ExitCode::launch, "no"};
  CHECK(job_summary(launch, 1, 0).exit_code == 3);
  CHECK(job_summary(launch, 1, 0).result == "launch_error");
}

TEST_CASE("report: the first failure is named, except after the rendezvous timeout", "[report]") {
  AttemptEnd failed = ended(StopReason::failed);
  failed.first = FirstFailure{2, RankExit{128 + SIGKILL, SIGKILL, ""}, 1.5};
  failed.failed_host = "h3";
  JobSummary summary = job_summary(failed, 2, 3.0);
  CHECK(summary.result == "failed");
  CHECK(summary.exit_code == 137);
  CHECK(summary.failed_rank == 2);
  CHECK(summary.host == "h3");
  CHECK(summary.attempts == 2);

  AttemptEnd overdue = failed;
  overdue.reason = StopReason::watchdog;
  overdue.error = Error{ExitCode::rendezvous_timeout, "rendezvous timed out"};
  summary = job_summary(overdue, 1, 0);
  CHECK(summary.result == "rendezvous_timeout");
  CHECK(summary.exit_code == 4);
  CHECK(summary.failed_rank == -1);
  CHECK(summary.host.empty());
}

TEST_CASE("report: the failure summary ends with the rank's last stderr lines", "[report]") {
  RankLaunch launch;
  launch.rank = 1;
  launch.host.name = "h2";
  FirstFailure first{1, RankExit{3, 0, ""}, 2};
  CHECK(failure_summary(launch, first, {"boom", "bang"}, 1) ==
        "ddl: error: rank 1 on h2 exited with code 3 after 2s\n"
        "ddl: last 2 stderr lines of rank 1:\n  [1] boom\n  [1] bang\n");
  CHECK(failure_summary(launch, first, {}, 3) ==
        "ddl: error: rank 1 on h2 exited with code 3 after 2s (DDL_ATTEMPT=2, no restart left)\n"
        "ddl: rank 1 wrote nothing on stderr\n");
  CHECK(restart_message(launch, first, 1, 2) == "ddl: rank 1 on h2 exited with code 3 after 2s; restarting (DDL_ATTEMPT=1, restart 1 of 2)\n");
  CHECK(timeout_message(Millis{7'200'000}) == "ddl: error: timed out after 2h\n");
  // A deadline given without a timeout (the preflight's workers' bound) printed
  // an empty optional's bytes as a duration.
  CHECK(timeout_message(std::nullopt) == "ddl: error: timed out\n");
}

TEST_CASE("report: a torch error file's message and traceback follow the stderr lines", "[report]") {
  RankLaunch launch;
  launch.rank = 1;
  launch.host.name = "h2";
  FirstFailure first{1, RankExit{1, 0, ""}, 2};
  RankError error{"ValueError: boom", "Traceback (most recent call last):\n  File \"t.py\", line 3\n", "1700000000"};
  CHECK(failure_summary(launch, first, {"oops"}, 1, error) ==
        "ddl: error: rank 1 on h2 exited with code 1 after 2s\n"
        "ddl: last 1 stderr line of rank 1:\n  [1] oops\n"
        "ddl: rank 1 raised (its torch error file): ValueError: boom\n"
        "ddl: traceback of rank 1:\n  [1] Traceback (most recent call last):\n  [1]   File \"t.py\", line 3\n");
}

TEST_CASE("parse_torch_error_file: torch's @record JSON, and what is not", "[report]") {
  // The shape torch's ErrorHandler.record_exception writes.
  auto full = parse_torch_error_file(
      R"({"message": {"message": "ValueError: boom", "extraInfo": {"py_callstack": "Traceback:\n  x\nValueError: boom\n", "timestamp": "1700000000"}}})");
  REQUIRE(full);
  CHECK(full->message == "ValueError: boom");
  CHECK(full->traceback == "Traceback:\n  x\nValueError: boom\n");
  CHECK(full->timestamp == "1700000000");
  auto plain = parse_torch_error_file(R"({"message": "RuntimeError: x"})");
  REQUIRE(plain);
  CHECK(plain->message == "RuntimeError: x");
  CHECK(plain->traceback.empty());
  CHECK_FALSE(parse_torch_error_file("not json"));
  CHECK_FALSE(parse_torch_error_file(R"({"other": 1})"));
  CHECK_FALSE(parse_torch_error_file(R"([1, 2])"));
}

TEST_CASE("bounded_traceback: the last lines, bounded in count and bytes", "[report]") {
  std::string many;
  for (int i = 0; i < 100; ++i) {
    many += "line " + std::to_string(i) + "\n";
  }
  const std::string cut = bounded_traceback(many);
  CHECK(cut.starts_with("...\nline 60\n"));
  CHECK(cut.ends_with("line 99\n"));
  const std::string wide = bounded_traceback(std::string(20'000, 'x') + "\nlast\n");
  CHECK(wide == "...\nlast\n");
  CHECK(bounded_traceback("a\nb\n") == "a\nb\n");
}

TEST_CASE("report: a rank whose host was lost under it did run; one that never started could not", "[report]") {
  RankLaunch launch;
  launch.rank = 2;
  launch.host.name = "h3";
  RankExit lost{3, 0, "lost the connection to h3: timed out"};
  lost.ran = true;
  FirstFailure ran{2, lost, 20};
  CHECK(describe_failure(launch, ran) ==
        "rank 2 on h3 ended without an exit status: lost the connection to h3: timed out after 20s");
  FirstFailure never{2, RankExit{3, 0, "cannot open a channel"}, 1};
  CHECK(describe_failure(launch, never) == "rank 2 on h3 could not run: cannot open a channel after 1s");
  CHECK(elastic_restart_message(launch, ran, 1, Millis{0}, true) ==
        "ddl: rank 2 on h3 ended without an exit status: lost the connection to h3: timed out after 20s; "
        "restarting on the hosts left (DDL_ATTEMPT=1)\n");
  CHECK(elastic_restart_message(launch, ran, 1, Millis{2000}, false) ==
        "ddl: rank 2 on h3 ended without an exit status: lost the connection to h3: timed out after 20s; "
        "no host of this attempt is left: running the host source again (DDL_ATTEMPT=1), in 2s\n");
}
