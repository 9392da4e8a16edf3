// SPDX-License-Identifier: MIT
// Gang semantics (DESIGN.md "Gang semantics and exit codes") of the real
// supervise() against the scripted FakeBackend: no processes, so every
// signal each rank got, and when, can be checked exactly.
// test_src_supervisor.cpp covers the same loop with real local processes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "tests/unit/captured_file.hpp"
#include "src/launch/supervisor.hpp"
#include "src/util/signals.hpp"
#include "tests/unit/fake_backend.hpp"

namespace {

using namespace std::chrono_literals;
using ddl::Stream;
using ddl::test::FakeBackend;
using ddl::test::RankScript;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One supervised job: `world_size` ranks on two hosts ("node-a" holds the
// first half), scripted by `script`, with the supervisor's output captured.
struct FakeGang {
  int world_size = 2;
  ddl::SupervisorOptions options;
  std::function<std::optional<ddl::Error>()> overdue;  // the rendezvous' exit-4 rule
  ddl::test::CapturedFile out;
  ddl::test::CapturedFile err;
  std::vector<int> attempts_built;
  FakeBackend backend;
  double seconds = 0;

  explicit FakeGang(FakeBackend::Scripter script) : backend(std::move(script)) {
    options.grace = 5000ms;
    options.output.stdout_fd = out.fd;
    options.output.stderr_fd = err.fd;
  }

  ddl::Plan plan() const {
    ddl::Plan plan;
    plan.job = "fake";
    plan.world_size = world_size;
    int first = (world_size + 1) / 2;
    plan.hosts = {ddl::Host{"node-a", "10.0.0.1", first, {}, "list"},
                  ddl::Host{"node-b", "10.0.0.2", world_size - first, {}, "list"}};
    return plan;
  }

  ddl::Result<int> run() {
    ddl::Plan job_plan = plan();
    auto build = [&](int attempt) -> ddl::Result<std::vector<ddl::RankLaunch>> {
      attempts_built.push_back(attempt);
      std::vector<ddl::RankLaunch> launches;
      for (int rank = 0; rank < world_size; ++rank) {
        ddl::RankLaunch launch;
        launch.rank = rank;
        launch.host = job_plan.hosts[rank < job_plan.hosts[0].slots ? 0 : 1];
        launch.argv = {"train", "--rank", std::to_string(rank)};
        launch.env = {{"DDL_RANK", std::to_string(rank)}, {"DDL_ATTEMPT", std::to_string(attempt)}};
        launch.grace = options.grace;
        launches.push_back(std::move(launch));
      }
      return launches;
    };
    auto start = std::chrono::steady_clock::now();
    ddl::FixedRound rounds(job_plan, build, overdue);
    auto code = ddl::supervise(backend, rounds, options);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The contract: supervise() returns only once every rank has ended.
    CHECK(backend.running().empty());
    backend.shutdown();
    CHECK(backend.left_at_shutdown().empty());
    ddl::SignalPipe::uninstall();
    return code;
  }
};

// Seconds between the first `first` and the first `then` that `rank` got.
double seconds_between(const FakeBackend& backend, int rank, int first, int then) {
  std::optional<ddl::test::FakeClock::time_point> a, b;
  for (const auto& s : backend.signals()) {
    if (s.rank == rank && s.signo == first && !a) {
      a = s.when;
    }
    if (s.rank == rank && s.signo == then && !b) {
      b = s.when;
    }
  }
  REQUIRE(a);
  REQUIRE(b);
  return std::chrono::duration<double>(*b - *a).count();
}

// Sends `signo` to this process once `n` ranks run (from another thread,
// as a user's ^C would arrive); the supervisor's SignalPipe catches it.
std::thread signal_when_running(const FakeBackend& backend, std::size_t n, int signo, int times = 1) {
  return std::thread([&backend, n, signo, times] {
    if (!backend.wait_running(n, 10s)) {
      return;  // the test's checks tell what went wrong
    }
    for (int i = 0; i < times; ++i) {
      ::kill(::getpid(), signo);
      std::this_thread::sleep_for(50ms);
    }
  });
}

} // namespace

TEST_CASE("gang: every rank exits 0", "[gang]") {
  FakeGang gang([](int rank, int) {
    auto s = RankScript::exits(0, std::chrono::milliseconds(10 * rank));
    s.output = {{Stream::out, "hello from " + std::to_string(rank) + "\n"}};
    return s;
  });
  gang.world_size = 4;
  auto code = gang.run();
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(gang.backend.prepared() == 1);
  CHECK(gang.backend.prepared_world_size() == 4);
  CHECK(gang.attempts_built == std::vector<int>{0});
  for (int rank = 0; rank < 4; ++rank) {
    CHECK(gang.backend.starts_of(rank) == 1);
    CHECK(contains(gang.out.text(), "[" + std::to_string(rank) + "] hello from " + std::to_string(rank) + "\n"));
  }
  CHECK(gang.backend.signals().empty());  // nobody is stopped when all succeed
  CHECK(gang.backend.exits().size() == 4);
  CHECK(gang.err.text().empty());
}

TEST_CASE("gang: the first failing rank ends the gang with its code", "[gang]") {
  SECTION("the others get SIGTERM, once, and end") {
    FakeGang gang([](int rank, int) {
      if (rank == 2) {
        auto s = RankScript::exits(3, 50ms);
        s.output = {{Stream::err, "first line\nit broke\n"}};
        return s;
      }
      return RankScript::runs_forever();
    });
    gang.world_size = 4;
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 3);
    CHECK(gang.seconds < 4.0);  // TERM ended them, not the 5s grace
    CHECK(gang.backend.signals_of(2).empty());
    for (int rank : {0, 1, 3}) {
      CHECK(gang.backend.signals_of(rank) == std::vector<int>{SIGTERM});
    }
    auto err = gang.err.text();
    CHECK(contains(err, "ddl: error: rank 2 on node-b exited with code 3 after"));
    CHECK(contains(err, "ddl: last 2 stderr lines of rank 2:\n  [2] first line\n  [2] it broke\n"));
    CHECK(contains(err, "[2] it broke\n"));  // the line itself, tagged, as it came
  }
  SECTION("a rank that ignores SIGTERM gets SIGKILL after grace") {
    FakeGang gang([](int rank, int) {
      if (rank == 0) {
        return RankScript::exits(5, 20ms);
      }
      auto s = RankScript::runs_forever();
      s.ignores_term = true;
      return s;
    });
    gang.world_size = 3;
    gang.options.grace = 300ms;
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 5);
    for (int rank : {1, 2}) {
      CHECK(gang.backend.signals_of(rank) == std::vector<int>{SIGTERM, SIGKILL});
      double waited = seconds_between(gang.backend, rank, SIGTERM, SIGKILL);
      CHECK(waited >= 0.29);
      CHECK(waited < 3.0);
    }
    for (const auto& exit : gang.backend.exits()) {
      if (exit.rank != 0) {
        CHECK(exit.how.signal == SIGKILL);
      }
    }
  }
  SECTION("a later failure while the gang stops does not change the code") {
    FakeGang gang([](int rank, int) {
      if (rank == 1) {
        return RankScript::exits(5, 20ms);
      }
      auto s = RankScript::exits(9, 150ms);  // fails on its own during grace
      s.ignores_term = true;
      return s;
    });
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 5);
    CHECK(gang.backend.signals_of(0) == std::vector<int>{SIGTERM});
    CHECK(contains(gang.err.text(), "ddl: error: rank 1 on node-b exited with code 5"));
  }
  SECTION("a rank killed by a signal gives 128+N") {
    FakeGang gang([](int rank, int) {
      return rank == 1 ? RankScript::killed_by(SIGSEGV, 20ms) : RankScript::runs_forever();
    });
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 128 + SIGSEGV);
    CHECK(gang.backend.signals_of(0) == std::vector<int>{SIGTERM});
    CHECK(contains(gang.err.text(), "ddl: error: rank 1 on node-b was killed by SIGSEGV after"));
    CHECK(contains(gang.err.text(), "ddl: rank 1 wrote nothing on stderr\n"));
  }
}

TEST_CASE("gang: a launch error is exit 3 and stops what started", "[gang]") {
  SECTION("start() of one rank fails") {
    FakeGang gang([](int rank, int) {
      return rank == 1 ? RankScript::cannot_start("rank 1 on node-a: command not found: train")
                       : RankScript::runs_forever();
    });
    gang.world_size = 4;
    auto code = gang.run();
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().code == ddl::ExitCode::launch);
    CHECK(code.error().message == "rank 1 on node-a: command not found: train");
    CHECK(gang.backend.signals_of(0) == std::vector<int>{SIGTERM});
    CHECK(gang.backend.starts_of(1) == 0);
    CHECK(gang.backend.starts_of(2) == 0);  // nothing starts after a launch error
    CHECK(gang.backend.starts_of(3) == 0);
  }
  SECTION("prepare() fails: nothing starts") {
    FakeGang gang([](int, int) { return RankScript::runs_forever(); });
    gang.backend.fail_prepare("node-b: cannot connect: Connection refused");
    auto code = gang.run();
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().code == ddl::ExitCode::launch);
    CHECK(code.error().message == "node-b: cannot connect: Connection refused");
    CHECK(gang.backend.launches().empty());
    CHECK(gang.attempts_built == std::vector<int>{0});  // built for prepare() to check, never started
  }
  SECTION("a started rank that never ran (RankExit::launch_error) is exit 3") {
    FakeGang gang([](int rank, int) {
      if (rank == 1) {
        RankScript s;
        s.lost_error = "the connection closed without an exit status";
        s.exit_code = 3;
        return s;
      }
      return RankScript::runs_forever();
    });
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 3);
    CHECK(gang.backend.signals_of(0) == std::vector<int>{SIGTERM});
    CHECK(gang.backend.starts_of(1) == 1);
  }
  SECTION("no restart after a launch error") {
    FakeGang gang([](int rank, int) {
      return rank == 0 ? RankScript::cannot_start("node-a: host key mismatch") : RankScript::exits(0);
    });
    gang.options.max_restarts = 3;
    auto code = gang.run();
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().code == ddl::ExitCode::launch);
    CHECK(gang.attempts_built == std::vector<int>{0});
  }
}

// DESIGN.md: a launch error (connect, auth, command not found) is exit 3.
// A backend that learns only after start() that a rank never ran reports
// RankExit::launch_error with whatever status it saw (the kubernetes backend:
// kubectl's own exit status, 1); the exit code must still be 3.
TEST_CASE("gang: a rank that never ran is exit 3 whatever status the backend saw", "[gang]") {
  FakeGang gang([](int rank, int) {
    if (rank == 0) {
      RankScript s;
      s.lost_error = "kubectl exec in pod trainer-1 failed: error: You must be logged in to the server";
      s.exit_code = 1;
      return s;
    }
    return RankScript::runs_forever();
  });
  auto code = gang.run();
  REQUIRE(code.has_value());
  INFO("supervise() passes RankExit::code through when RankExit::launch_error is set");
  CHECK(*code == ddl::to_int(ddl::ExitCode::launch));
  CHECK(gang.backend.signals_of(1) == std::vector<int>{SIGTERM});
}

TEST_CASE("gang: the job timeout is exit 124 and stops everyone", "[gang]") {
  FakeGang gang([](int rank, int) {
    auto s = RankScript::runs_forever();
    s.ignores_term = rank == 1;
    return s;
  });
  gang.world_size = 3;
  gang.options.timeout = 200ms;
  gang.options.grace = 300ms;
  auto code = gang.run();
  REQUIRE(code.has_value());
  CHECK(*code == 124);
  CHECK(gang.seconds >= 0.19);
  CHECK(gang.seconds < 4.0);
  CHECK(gang.backend.signals_of(0) == std::vector<int>{SIGTERM});
  CHECK(gang.backend.signals_of(1) == std::vector<int>{SIGTERM, SIGKILL});
  CHECK(gang.backend.signals_of(2) == std::vector<int>{SIGTERM});
  CHECK(seconds_between(gang.backend, 1, SIGTERM, SIGKILL) >= 0.29);
  CHECK(contains(gang.err.text(), "ddl: error: timed out after 200ms\n"));
}

TEST_CASE("gang: restarts re-run the whole gang", "[gang]") {
  SECTION("succeeds on the third attempt") {
    // Attempt 0: rank 1 fails; attempt 1: rank 0 fails; attempt 2: all succeed.
    FakeGang gang([](int rank, int attempt) {
      if (attempt == 2) {
        return RankScript::exits(0, 10ms);
      }
      return rank == 1 - attempt ? RankScript::exits(7, 20ms) : RankScript::runs_forever();
    });
    gang.world_size = 3;
    gang.options.max_restarts = 2;
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 0);
    CHECK(gang.attempts_built == std::vector<int>{0, 1, 2});
    for (int rank = 0; rank < 3; ++rank) {
      CHECK(gang.backend.starts_of(rank) == 3);  // the whole gang, not the failed rank
    }
    // Each start saw its attempt in the env the builder made.
    for (const auto& launch : gang.backend.launches()) {
      CHECK(std::find(launch.env.begin(), launch.env.end(),
                      std::pair<std::string, std::string>{"DDL_ATTEMPT", std::to_string(launch.attempt)}) !=
            launch.env.end());
    }
    // An attempt starts only once every rank of the one before has ended.
    for (int attempt = 1; attempt < 3; ++attempt) {
      auto first_start = ddl::test::FakeClock::time_point::max();
      for (const auto& launch : gang.backend.launches()) {
        if (launch.attempt == attempt) {
          first_start = std::min(first_start, launch.when);
        }
      }
      for (const auto& exit : gang.backend.exits()) {
        if (exit.attempt == attempt - 1) {
          CHECK(exit.when <= first_start);
        }
      }
    }
    CHECK(gang.backend.signals_of(0, 0) == std::vector<int>{SIGTERM});
    CHECK(gang.backend.signals_of(1, 1) == std::vector<int>{SIGTERM});
    CHECK(gang.backend.signals_of(0, 2).empty());
    auto err = gang.err.text();
    CHECK(contains(err, "ddl: rank 1 on node-a exited with code 7 after"));
    CHECK(contains(err, "; restarting (DDL_ATTEMPT=1, restart 1 of 2)\n"));
    CHECK(contains(err, "ddl: rank 0 on node-a exited with code 7 after"));
    CHECK(contains(err, "; restarting (DDL_ATTEMPT=2, restart 2 of 2)\n"));
  }
  SECTION("gives up after the last restart, with the count in the summary") {
    FakeGang gang([](int rank, int) { return rank == 0 ? RankScript::exits(7, 10ms) : RankScript::runs_forever(); });
    gang.options.max_restarts = 1;
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 7);
    CHECK(gang.attempts_built == std::vector<int>{0, 1});
    CHECK(gang.backend.starts_of(0) == 2);
    CHECK(gang.backend.starts_of(1) == 2);
    auto err = gang.err.text();
    CHECK(contains(err, "restarting (DDL_ATTEMPT=1, restart 1 of 1)\n"));
    CHECK(std::regex_search(err, std::regex(R"(ddl: error: rank 0 on node-a exited with code 7 after \S+ \(DDL_ATTEMPT=1, no restart left\)\n)")));
  }
  SECTION("--json shows the attempts") {
    FakeGang gang([](int rank, int attempt) {
      return rank == 0 && attempt == 0 ? RankScript::exits(7, 10ms) : RankScript::exits(0, 30ms);
    });
    gang.options.max_restarts = 1;
    gang.options.output.json = true;
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 0);
    auto out = gang.out.text();
    CHECK(contains(out, R"("event":"restart",)"));
    CHECK(contains(out, R"("attempt":1,"max_restarts":1})"));
    CHECK(contains(out, R"("attempts":2)"));
  }
}

TEST_CASE("gang: a rendezvous watchdog ends the gang with exit 4", "[gang]") {
  SECTION("it fires") {
    FakeGang gang([](int, int) { return RankScript::runs_forever(); });
    gang.world_size = 3;
    std::atomic<int> asked{0};
    auto since = std::chrono::steady_clock::now();
    gang.overdue = [&]() -> std::optional<ddl::Error> {
      ++asked;
      if (std::chrono::steady_clock::now() - since < 150ms) {
        return std::nullopt;
      }
      return ddl::Error{ddl::ExitCode::rendezvous_timeout, "rendezvous: 2 of 3 ranks joined within 150ms"};
    };
    auto code = gang.run();
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().code == ddl::ExitCode::rendezvous_timeout);
    CHECK(ddl::to_int(code.error().code) == 4);
    CHECK(code.error().message == "rendezvous: 2 of 3 ranks joined within 150ms");
    CHECK(asked >= 2);
    for (int rank = 0; rank < 3; ++rank) {
      CHECK(gang.backend.signals_of(rank) == std::vector<int>{SIGTERM});
    }
  }
  SECTION("it stays quiet while the gang succeeds") {
    FakeGang gang([](int, int) { return RankScript::exits(0, 250ms); });
    std::atomic<int> asked{0};
    gang.overdue = [&]() -> std::optional<ddl::Error> {
      ++asked;
      return std::nullopt;
    };
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 0);
    CHECK(asked >= 1);  // asked while the ranks ran (about every 100 ms)
    CHECK(gang.backend.signals().empty());
  }
}

TEST_CASE("gang: output lines are whole and tagged per rank", "[gang]") {
  SECTION("chunks become lines; a final partial line is flushed") {
    FakeGang gang([](int rank, int) {
      RankScript s = RankScript::exits(0, 20ms);
      if (rank == 0) {
        s.output = {{Stream::out, "hel"}, {Stream::err, "warn"}, {Stream::out, "lo\nwor"},
                    {Stream::err, "ing\n"}, {Stream::out, "ld\n"}};
      } else {
        s.output = {{Stream::out, "no newline"}, {Stream::err, "\n"}};
      }
      return s;
    });
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 0);
    auto out = gang.out.text();
    auto err = gang.err.text();
    CHECK(contains(out, "[0] hello\n"));
    CHECK(contains(out, "[0] world\n"));
    CHECK(contains(out, "[1] no newline\n"));
    CHECK(contains(err, "[0] warning\n"));
    CHECK(contains(err, "[1] \n"));  // an empty line is still a line
    CHECK(std::count(out.begin(), out.end(), '\n') == 3);
  }
  SECTION("many ranks writing at once never mix lines") {
    constexpr int k_lines = 200;
    FakeGang gang([](int rank, int) {
      RankScript s = RankScript::exits(0, 10ms);
      std::string tag = "r" + std::to_string(rank) + "-";
      for (int i = 0; i < k_lines; ++i) {
        // Each line in three chunks, so lines are assembled across writes.
        std::string line = tag + std::to_string(i) + "-" + std::string(static_cast<std::size_t>(i % 50), 'x');
        s.output.emplace_back(Stream::out, line.substr(0, 2));
        s.output.emplace_back(Stream::out, line.substr(2));
        s.output.emplace_back(Stream::out, "\n");
      }
      return s;
    });
    gang.world_size = 8;
    auto code = gang.run();
    REQUIRE(code.has_value());
    CHECK(*code == 0);
    std::istringstream lines(gang.out.text());
    std::regex shape(R"(\[(\d)\] r(\d)-(\d+)-(x*))");
    std::vector<int> count(8, 0);
    std::string line;
    int bad = 0;
    while (std::getline(lines, line)) {
      std::smatch m;
      if (!std::regex_match(line, m, shape) || m[1] != m[2] ||
          m[4].length() != std::stoi(m[3]) % 50) {
        ++bad;
        continue;
      }
      ++count[static_cast<std::size_t>(std::stoi(m[1]))];
    }
    CHECK(bad == 0);
    CHECK(count == std::vector<int>(8, k_lines));
  }
}

TEST_CASE("gang: SIGINT and SIGTERM to ddl are forwarded", "[gang]") {
  SECTION("SIGINT: every rank gets it, exit 130") {
    FakeGang gang([](int, int) { return RankScript::runs_forever(); });
    gang.world_size = 3;
    auto sender = signal_when_running(gang.backend, 3, SIGINT);
    auto code = gang.run();
    sender.join();
    REQUIRE(code.has_value());
    CHECK(*code == 130);
    for (int rank = 0; rank < 3; ++rank) {
      CHECK(gang.backend.signals_of(rank) == std::vector<int>{SIGINT});
    }
  }
  SECTION("SIGTERM: exit 143") {
    FakeGang gang([](int, int) { return RankScript::runs_forever(); });
    auto sender = signal_when_running(gang.backend, 2, SIGTERM);
    auto code = gang.run();
    sender.join();
    REQUIRE(code.has_value());
    CHECK(*code == 143);
    CHECK(gang.backend.signals_of(0) == std::vector<int>{SIGTERM});
    CHECK(gang.backend.signals_of(1) == std::vector<int>{SIGTERM});
  }
  SECTION("a second SIGINT within a second kills at once") {
    FakeGang gang([](int, int) {
      auto s = RankScript::runs_forever();
      s.ignores_term = true;
      return s;
    });
    gang.options.grace = 30s;
    auto sender = signal_when_running(gang.backend, 2, SIGINT, 2);
    auto code = gang.run();
    sender.join();
    REQUIRE(code.has_value());
    CHECK(*code == 130);
    CHECK(gang.seconds < 10.0);  // not the 30s grace
    for (int rank = 0; rank < 2; ++rank) {
      CHECK(gang.backend.signals_of(rank) == std::vector<int>{SIGINT, SIGKILL});
    }
  }
  SECTION("no restart after SIGINT") {
    FakeGang gang([](int, int) { return RankScript::runs_forever(); });
    gang.options.max_restarts = 3;
    auto sender = signal_when_running(gang.backend, 2, SIGINT);
    auto code = gang.run();
    sender.join();
    REQUIRE(code.has_value());
    CHECK(*code == 130);
    CHECK(gang.attempts_built == std::vector<int>{0});
  }
}
