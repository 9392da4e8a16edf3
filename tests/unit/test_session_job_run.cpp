// SPDX-License-Identifier: MIT
// The pass list of a run (src/session/job_run.hpp) against the scripted
// FakeBackend, as ninja tests its builder with a fake command runner: which
// passes run, in which order, where a failing pass stops the list, and that
// the loaded job is never edited (a pass answers with the job it launches).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "src/launch/plan_hosts.hpp"
#include "src/session/job_run.hpp"
#include "src/util/signals.hpp"
#include "tests/unit/fake_backend.hpp"

namespace {

using ddl::test::FakeBackend;
using ddl::test::RankScript;

const std::vector<std::string> k_plan_passes = {"select backend", "hosts", "plan", "preflight", "personality checks",
                                                "MPI mode"};
const std::vector<std::string> k_all_passes = {"select backend", "hosts", "plan", "preflight", "personality checks",
                                               "MPI mode", "output", "hosts left", "rounds", "supervise"};

// A job of `np` ranks on this machine's loopback, run by `command`.
ddl::JobSpec fake_job(int np) {
  ddl::JobSpec job;
  job.name = "fake";
  job.hosts.list = {ddl::HostSpec{"localhost", np}};
  job.command = {"train", "--epochs", "1"};
  job.frameworks.clear();
  return job;
}

// The run's backend: a FakeBackend whose ranks follow `script`; `backend`
// points at it while the run holds it.
struct FakeSelect {
  FakeBackend::Scripter script;
  FakeBackend* backend = nullptr;

  ddl::session::RunAsk ask() {
    ddl::session::RunAsk ask;
    ask.live = false;
    ask.select = [this](const ddl::JobSpec& job) -> ddl::Result<ddl::SelectedBackend> {
      auto fake = std::make_unique<FakeBackend>(script);
      backend = fake.get();
      auto found = ddl::found_hosts(job, *fake);
      if (!found) {
        return ddl::fail(found.error());
      }
      ddl::SelectedBackend selected;
      selected.backend = std::move(fake);
      selected.hosts = std::move(*found);
      return selected;
    };
    return ask;
  }
};

struct SignalsUninstalled {
  ~SignalsUninstalled() { ddl::SignalPipe::uninstall(); }
};

} // namespace

TEST_CASE("JobRun: the passes in their order", "[session]") {
  SignalsUninstalled signals;
  const ddl::JobSpec loaded = fake_job(2);
  FakeSelect fake{[](int, int) { return RankScript::exits(0); }};

  SECTION("a launch runs every pass once, the gang supervised to its end") {
    ddl::session::JobRun run(loaded, fake.ask());
    auto code = run.run();
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(run.passes_run() == k_all_passes);
    REQUIRE(fake.backend != nullptr);
    auto launches = fake.backend->launches();
    REQUIRE(launches.size() == 2);
    CHECK(launches[0].argv == std::vector<std::string>{"train", "--epochs", "1"});
    CHECK(fake.backend->running().empty());
  }
  SECTION("plan() is what --dry-run shows: nothing is launched") {
    auto ask = fake.ask();
    ask.dry_run = true;
    ddl::session::JobRun run(loaded, std::move(ask));
    REQUIRE(run.plan());
    CHECK(run.passes_run() == k_plan_passes);
    CHECK(run.planned().plan.world_size == 2);
    CHECK(std::string(run.planned().backend->name()) == "fake");
    CHECK(fake.backend->launches().empty());
  }
  SECTION("a failing pass ends the list: a rank option outside the planned world") {
    ddl::JobSpec job = loaded;
    job.stdin_ranks = ddl::StdinRanks{ddl::StdinRanks::Kind::one, 5};
    ddl::session::JobRun run(job, fake.ask());
    auto code = run.run();
    REQUIRE_FALSE(code);
    CHECK(code.error().code == ddl::ExitCode::usage);
    CHECK(code.error().message == "--stdin: rank 5 is not in this job of 2 ranks (0-1)");
    CHECK(run.passes_run() == k_plan_passes);
    CHECK(fake.backend->launches().empty());
  }
}

TEST_CASE("JobRun: the loaded job is read-only; passes answer with the job they launch", "[session]") {
  SignalsUninstalled signals;
  const ddl::JobSpec loaded = fake_job(2);
  FakeSelect fake{[](int, int) { return RankScript::exits(0); }};

  SECTION("a personality's plan-time answer reaches the ranks, the loaded job unchanged") {
    auto ask = fake.ask();
    int asked = 0;
    ask.persona = [&asked](const ddl::JobSpec& job,
                           const ddl::session::PlannedJob& planned) -> ddl::Result<ddl::JobSpec> {
      ++asked;
      ddl::JobSpec answered = job;
      answered.env.emplace_back("PERSONA_HOSTS", std::to_string(planned.plan.hosts.size()));
      return answered;
    };
    ddl::session::JobRun run(loaded, std::move(ask));
    auto code = run.run();
    REQUIRE(code);
    CHECK(asked == 1);
    CHECK(loaded.env.empty());
    auto launches = fake.backend->launches();
    REQUIRE(launches.size() == 2);
    for (const auto& launch : launches) {
      CHECK(std::ranges::count(launch.env, std::pair<std::string, std::string>{"PERSONA_HOSTS", "1"}) == 1);
    }
  }
  SECTION("a personality that refuses ends the run before anything starts") {
    auto ask = fake.ask();
    ask.persona = [](const ddl::JobSpec&, const ddl::session::PlannedJob&) -> ddl::Result<ddl::JobSpec> {
      return ddl::fail(ddl::ExitCode::usage, "--nnodes: 2 hosts needed, 1 found");
    };
    ddl::session::JobRun run(loaded, std::move(ask));
    auto code = run.run();
    REQUIRE_FALSE(code);
    CHECK(code.error().message == "--nnodes: 2 hosts needed, 1 found");
    CHECK(run.passes_run().back() == "personality checks");
    CHECK(fake.backend->launches().empty());
  }
  SECTION("bench's worker program replaces the job's command, which needs none") {
    ddl::JobSpec job = loaded;
    job.command.clear();
    auto ask = fake.ask();
    ask.worker = [](const ddl::Backend&) { return std::vector<std::string>{"ddl", "worker", "allreduce"}; };
    ddl::session::JobRun run(job, std::move(ask));
    auto code = run.run();
    REQUIRE(code);
    CHECK(job.command.empty());
    auto launches = fake.backend->launches();
    REQUIRE(launches.size() == 2);
    CHECK(launches[1].argv == std::vector<std::string>{"ddl", "worker", "allreduce"});
  }
}
