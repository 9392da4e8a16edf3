// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/launch/restart_policy.hpp"

using namespace ddl;

namespace {

RankFailure exited(int rank, std::string host, int code) {
  RankFailure failure{rank, std::move(host), {}};
  failure.how.code = code;
  return failure;
}

RankFailure lost(int rank, std::string host) {
  RankFailure failure{rank, host, {}};
  failure.how.code = 3;
  failure.how.launch_error = "lost the connection to " + host + ": host not answering";
  return failure;
}

} // namespace

TEST_CASE("restart policy: max_restarts alone restarts the same gang", "[restart]") {
  RestartPolicy policy(RestartRules{.max_restarts = 1});
  CHECK(policy.after_failure({exited(1, "a", 7)}).verdict == Verdict::restart);
  auto second = policy.after_failure({exited(1, "a", 7)});
  CHECK(second.verdict == Verdict::stop);
  CHECK(second.why.empty());
  // Without min_np a lost host is a failure like any other.
  RestartPolicy plain(RestartRules{.max_restarts = 1});
  auto decision = plain.after_failure({lost(2, "h3")});
  CHECK(decision.verdict == Verdict::restart);
  CHECK(decision.lost.empty());
}

TEST_CASE("restart policy: fail_on and restart_on", "[restart]") {
  RestartPolicy fail_on(RestartRules{.max_restarts = 5, .fail_on = {42}});
  auto decision = fail_on.after_failure({exited(0, "a", 42)});
  CHECK(decision.verdict == Verdict::stop);
  CHECK(decision.why == "exit code 42 is in launch.fail_on");
  CHECK(fail_on.after_failure({exited(0, "a", 1)}).verdict == Verdict::restart);

  RestartPolicy restart_on(RestartRules{.max_restarts = 5, .restart_on = {75, 143}});
  CHECK(restart_on.after_failure({exited(0, "a", 75)}).verdict == Verdict::restart);
  decision = restart_on.after_failure({exited(0, "a", 1)});
  CHECK(decision.verdict == Verdict::stop);
  CHECK(decision.why == "exit code 1 is not in launch.restart_on");
}

TEST_CASE("restart policy: a lost host is excluded and counted apart", "[restart]") {
  RestartPolicy policy(RestartRules{.max_restarts = 0, .min_np = 2, .max_host_losses = 1});
  // The first failure seen is a survivor's (gloo noticed first); the lost host is still found.
  auto decision = policy.after_failure({exited(0, "h1", 1), lost(4, "h3"), lost(5, "h3")});
  CHECK(decision.verdict == Verdict::replan);
  REQUIRE(decision.lost.size() == 1);
  CHECK(decision.lost[0].name == "h3");
  CHECK(decision.lost[0].why == "lost the connection to h3: host not answering");
  CHECK(policy.is_excluded("h3"));
  CHECK(policy.program_restarts() == 0);  // max_restarts 0 did not stop it
  CHECK(policy.restarts_used() == 1);
  decision = policy.after_failure({lost(0, "h1")});
  CHECK(decision.verdict == Verdict::stop);
  CHECK(decision.why == "2 hosts lost, more than launch.max_host_losses 1");
  REQUIRE(policy.excluded().size() == 2);
}

TEST_CASE("restart policy: elastic program failures re-plan, within max_restarts", "[restart]") {
  RestartPolicy policy(RestartRules{.max_restarts = 1, .min_np = 1});
  auto decision = policy.after_failure({exited(0, "h1", 1)});
  CHECK(decision.verdict == Verdict::replan);
  CHECK(decision.lost.empty());
  CHECK(policy.after_failure({exited(0, "h1", 1)}).verdict == Verdict::stop);
}

TEST_CASE("restart policy: host_failures loses a host whose ranks keep failing first", "[restart]") {
  RestartPolicy policy(RestartRules{.max_restarts = 5, .min_np = 1, .host_failures = 2});
  CHECK(policy.after_failure({exited(0, "h2", 1)}).lost.empty());
  auto decision = policy.after_failure({exited(0, "h2", 1)});
  REQUIRE(decision.lost.size() == 1);
  CHECK(decision.lost[0].why == "its ranks failed first 2 times");
}

TEST_CASE("restart policy: backoff doubles, at most a minute", "[restart]") {
  RestartPolicy policy(RestartRules{.max_restarts = 10, .backoff = Millis{1000}});
  CHECK(policy.after_failure({exited(0, "a", 1)}).wait == Millis{1000});
  CHECK(policy.after_failure({exited(0, "a", 1)}).wait == Millis{2000});
  CHECK(policy.after_failure({exited(0, "a", 1)}).wait == Millis{4000});
  for (int i = 0; i < 5; ++i) {
    policy.after_failure({exited(0, "a", 1)});
  }
  CHECK(policy.after_failure({exited(0, "a", 1)}).wait == Millis{60'000});
}

TEST_CASE("restart policy: preflight exclusions count as host losses", "[restart]") {
  RestartPolicy policy(RestartRules{.min_np = 1, .max_host_losses = 1});
  CHECK(policy.exclude("h4", "preflight: connection refused"));
  CHECK_FALSE(policy.exclude("h2", "preflight: connection refused"));
  CHECK(policy.host_losses() == 2);
}
