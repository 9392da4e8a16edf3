// SPDX-License-Identifier: MIT
// The supervisor with the real local backend: real processes, real signals.
// Gang logic that needs no process (restarts, timeout, watchdog, which
// signal each rank got and when) is in test_launch_gang.cpp, on the fake.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "tests/unit/captured_file.hpp"
#include "backends/local/local_backend.hpp"
#include "src/util/signals.hpp"
#include "src/launch/supervisor.hpp"

namespace {

struct GangRun {
  int world_size = 2;
  ddl::SupervisorOptions options;
  ddl::test::CapturedFile out;
  ddl::test::CapturedFile err;
  std::vector<int> attempts_built;

  // Every rank runs `script` under sh with DDL_RANK and DDL_ATTEMPT set.
  ddl::Result<int> run(const std::string& script) {
    ddl::Plan plan;
    plan.world_size = world_size;
    plan.hosts = {ddl::Host{"localhost", "127.0.0.1", world_size, {}, "local"}};
    options.output.stdout_fd = out.fd;
    options.output.stderr_fd = err.fd;
    auto build = [&](int attempt) -> ddl::Result<std::vector<ddl::RankLaunch>> {
      attempts_built.push_back(attempt);
      std::vector<ddl::RankLaunch> launches;
      for (int rank = 0; rank < world_size; ++rank) {
        ddl::RankLaunch launch;
        launch.rank = rank;
        launch.host = plan.hosts[0];
        launch.argv = {"/bin/sh", "-c", script};
        launch.env = {{"PATH", "/usr/bin:/bin"},
                      {"DDL_RANK", std::to_string(rank)},
                      {"DDL_ATTEMPT", std::to_string(attempt)}};
        launches.push_back(launch);
      }
      return launches;
    };
    ddl::LocalBackend backend;
    ddl::FixedRound rounds(plan, build);
    auto code = ddl::supervise(backend, rounds, options);
    backend.shutdown();
    ddl::SignalPipe::uninstall();
    return code;
  }
};

double seconds_of(const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

TEST_CASE("supervisor: every rank succeeds", "[supervisor]") {
  GangRun gang;
  gang.world_size = 3;
  auto code = gang.run("echo out $DDL_RANK; echo err $DDL_RANK >&2");
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  auto out = gang.out.text();
  for (int rank = 0; rank < 3; ++rank) {
    CHECK(out.find("[" + std::to_string(rank) + "] out " + std::to_string(rank) + "\n") != std::string::npos);
    CHECK(gang.err.text().find("[" + std::to_string(rank) + "] err " + std::to_string(rank) + "\n") !=
          std::string::npos);
  }
}

TEST_CASE("supervisor: the first failure ends the gang with its code", "[supervisor]") {
  GangRun gang;
  gang.world_size = 3;
  gang.options.grace = std::chrono::milliseconds(5000);
  int result = -1;
  double took = seconds_of([&] {
    auto code = gang.run(R"(if [ "$DDL_RANK" = 1 ]; then echo boom >&2; exit 3; fi; exec sleep 30)");
    REQUIRE(code.has_value());
    result = *code;
  });
  CHECK(result == 3);
  CHECK(took < 3.0);  // the sleepers died of SIGTERM, not of the grace period
  auto err = gang.err.text();
  CHECK(err.find("ddl: error: rank 1 on localhost exited with code 3") != std::string::npos);
  CHECK(err.find("  [1] boom\n") != std::string::npos);
}

TEST_CASE("supervisor: a rank killed by a signal gives 128+N", "[supervisor]") {
  GangRun gang;
  auto code = gang.run(R"(if [ "$DDL_RANK" = 0 ]; then kill -KILL $$; fi; exec sleep 30)");
  REQUIRE(code.has_value());
  CHECK(*code == 137);
  CHECK(gang.err.text().find("was killed by SIGKILL") != std::string::npos);
}

TEST_CASE("supervisor: a rank that ignores SIGTERM is killed after grace", "[supervisor]") {
  GangRun gang;
  gang.options.grace = std::chrono::milliseconds(300);
  int result = -1;
  double took = seconds_of([&] {
    auto code = gang.run(R"(if [ "$DDL_RANK" = 0 ]; then sleep 0.2; exit 5; fi; trap '' TERM; while :; do sleep 0.05; done)");
    REQUIRE(code.has_value());
    result = *code;
  });
  CHECK(result == 5);
  CHECK(took >= 0.5);
  CHECK(took < 3.0);
}

TEST_CASE("supervisor: a final partial line is flushed", "[supervisor]") {
  GangRun gang;
  gang.world_size = 1;
  auto code = gang.run("printf 'no newline'");
  REQUIRE(code.has_value());
  CHECK(gang.out.text() == "[0] no newline\n");
}

TEST_CASE("supervisor: a missing command is a launch error", "[supervisor]") {
  ddl::Plan plan;
  plan.world_size = 1;
  plan.hosts = {ddl::Host{"localhost", "127.0.0.1", 1, {}, "local"}};
  auto build = [&](int) -> ddl::Result<std::vector<ddl::RankLaunch>> {
    ddl::RankLaunch launch;
    launch.host = plan.hosts[0];
    launch.argv = {"ddl-no-such-program-xyz"};
    launch.env = {{"PATH", "/usr/bin:/bin"}};
    return std::vector<ddl::RankLaunch>{launch};
  };
  ddl::LocalBackend backend;
  ddl::FixedRound rounds(plan, build);
  auto code = ddl::supervise(backend, rounds, ddl::SupervisorOptions{});
  backend.shutdown();
  ddl::SignalPipe::uninstall();
  REQUIRE_FALSE(code.has_value());
  CHECK(code.error().code == ddl::ExitCode::launch);
  CHECK(code.error().message == "rank 0 on localhost: command not found: ddl-no-such-program-xyz");
}

TEST_CASE("format_elapsed", "[supervisor]") {
  CHECK(ddl::format_elapsed(0.5) == "0.50s");
  CHECK(ddl::format_elapsed(2) == "2s");
  CHECK(ddl::format_elapsed(12.34) == "12.3s");
  CHECK(ddl::format_elapsed(312) == "5m12s");
  CHECK(ddl::format_elapsed(3720) == "1h02m");
}
