// SPDX-License-Identifier: MIT
// The skeletons of backends/: launcher_command's pieces, and LauncherBackend
// driven by a TEST DOUBLE launcher (a shell script that prints "R: line" for
// rank R and an exit marker), so that what every launcher backend shares is
// tested without mpirun or srun.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "backends/launcher_backend.hpp"
#include "backends/launcher_command.hpp"
#include "backends/per_rank_backend.hpp"
#include "src/util/text.hpp"
#include "tests/unit/shell_run.hpp"

using namespace ddl;

namespace {

std::vector<RankLaunch> gang_of(int world) {
  std::vector<RankLaunch> launches(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    auto& launch = launches[static_cast<std::size_t>(r)];
    launch.rank = r;
    launch.host = Host{"h" + std::to_string(r), "10.0.0." + std::to_string(r), 1, {}, "list"};
    launch.argv = {"app", "--x"};
    launch.env = {{"SAME", "v"}, {"RANK", std::to_string(r)}, {"OMPI_X", "skip"}, {"ODD", "a 'b'"}};
  }
  return launches;
}

class Recorder final : public RankEvents {
public:
  void started(int rank, long) override {
    std::lock_guard lock(mutex_);
    started_.push_back(rank);
  }
  void output(int rank, Stream stream, std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    (stream == Stream::out ? out_ : err_)[rank].append(bytes);
  }
  void exited(int rank, const RankExit& how) override {
    std::lock_guard lock(mutex_);
    exits_.emplace_back(rank, how);
  }
  // Polls `done` (which may call the accessors below) until true or `limit`.
  static bool wait_for(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(20)) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() >= until) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  std::string out(int rank) {
    std::lock_guard lock(mutex_);
    return out_[rank];
  }
  std::string err(int rank) {
    std::lock_guard lock(mutex_);
    return err_[rank];
  }
  std::vector<std::pair<int, RankExit>> exits() {
    std::lock_guard lock(mutex_);
    return exits_;
  }
  std::size_t exit_count() {
    std::lock_guard lock(mutex_);
    return exits_.size();
  }
  std::size_t started_count() {
    std::lock_guard lock(mutex_);
    return started_.size();
  }

private:
  std::mutex mutex_;
  std::vector<int> started_;
  std::map<int, std::string> out_, err_;
  std::vector<std::pair<int, RankExit>> exits_;
};

constexpr std::string_view k_fake_marker = "ddl-fake: rank ";

// TEST DOUBLE: the output parser of the fake launcher: "R: text" lines.
class FakeLauncherOutput final : public LauncherOutput {
public:
  explicit FakeLauncherOutput(Sink sink) : LauncherOutput(std::move(sink)) {}
  void feed(Stream stream, std::string_view bytes) override {
    pending_ += bytes;
    for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n')) {
      std::string line = pending_.substr(0, nl + 1);
      pending_.erase(0, nl + 1);
      if (auto marker = parse_exit_marker(line, k_fake_marker)) {
        first_ = first_ ? first_ : marker;
      } else if (line.size() > 3 && line[1] == ':' && line[0] >= '0' && line[0] <= '9') {
        to_rank(line[0] - '0', stream, line.substr(3));
      } else {
        launcher_says(line);
      }
    }
  }
  void finish() override { launcher_says(std::exchange(pending_, {})); }
  std::optional<Blame> blame(const RankExit&, std::span<const RankLaunch>) const override {
    if (!first_) {
      return std::nullopt;
    }
    return Blame{first_->first, RankExit{first_->second}};
  }

private:
  std::string pending_;
  std::optional<std::pair<int, int>> first_;
};

// TEST DOUBLE: a launcher backend whose launcher is a shell script: it
// prints a line per rank, one per SIGUSR1 too, waits for the release file,
// then exits as $FAKE_END says.
class FakeLauncher final : public LauncherBackend {
public:
  explicit FakeLauncher(std::string end, std::string dump = {})
      : LauncherBackend("fake-launcher"), end_(std::move(end)), dump_(std::move(dump)) {}
  ~FakeLauncher() override { shutdown(); }
  std::string_view name() const override { return "fake"; }
  std::string release = (std::filesystem::temp_directory_path() /
                         ("ddl-fake-launcher-" + std::to_string(::getpid()))).string();

protected:
  Result<void> find_launcher(const Plan&) override { return {}; }
  Result<LauncherCommand> command(std::span<const RankLaunch> launches, bool dry_run) override {
    auto hostfile = gang_file("hostfile", "h0\nh1\n", dry_run);
    if (!hostfile) {
      return fail(hostfile.error());
    }
    LauncherCommand command;
    command.note = "a test double";
    command.argv = {"sh", "-c",
                    "trap 'echo \"0: usr1\"; echo \"1: usr1\"' USR1\n"
                    "echo '0: hello'; echo '1: world'\n"
                    "i=0; while [ ! -e \"$FAKE_RELEASE\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done\n"
                    "eval \"$FAKE_END\"\n",
                    "fake", *hostfile, std::to_string(launches.size())};
    command.env = {{"FAKE_RELEASE", release}, {"FAKE_END", end_}};
    return command;
  }
  std::unique_ptr<LauncherOutput> parse_output(int, LauncherOutput::Sink sink) override {
    return std::make_unique<FakeLauncherOutput>(std::move(sink));
  }
  // The dumper: sh -c DUMP sh RANK TOOL (none when DUMP is empty).
  std::optional<std::vector<std::string>> dump_command(const RankLaunch& launch, DumpTool tool, Millis) override {
    if (dump_.empty()) {
      return std::nullopt;
    }
    return std::vector<std::string>{"sh", "-c", dump_, "sh", std::to_string(launch.rank),
                                    std::string(dump_tool_name(tool))};
  }

private:
  std::string end_;
  std::string dump_;
};

Plan plan_of(int world) {
  Plan plan;
  plan.world_size = world;
  return plan;
}

} // namespace

TEST_CASE("split_gang_env: the same value on every rank is shared, the rest per rank", "[launcher]") {
  auto gang = gang_of(2);
  auto env = split_gang_env(gang, [](std::string_view name) { return name.starts_with("OMPI_"); });
  REQUIRE(env);
  CHECK(env->shared == EnvList{{"SAME", "v"}, {"ODD", "a 'b'"}});
  CHECK(env->ranks == std::vector<std::string>{"export RANK='0'\n", "export RANK='1'\n"});
  gang[1].env.emplace_back("NUL", std::string("a\0b", 3));
  auto refused = split_gang_env(gang);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "env NUL holds a NUL byte");
}

TEST_CASE("parse_exit_marker", "[launcher]") {
  CHECK(parse_exit_marker("ddl-mpi: rank 3 exit 7\n", "ddl-mpi: rank ") == std::pair{3, 7});
  CHECK_FALSE(parse_exit_marker("ddl-mpi: rank x exit 7", "ddl-mpi: rank ").has_value());
  CHECK_FALSE(parse_exit_marker("ddl-mpi: rank 3 quit 7", "ddl-mpi: rank ").has_value());
  CHECK_FALSE(parse_exit_marker("rank 3 exit 7", "ddl-mpi: rank ").has_value());
}

TEST_CASE("the rank script takes its own rank's env and reports a failure", "[launcher]") {
  const RankScript names{"FAKE_RANK", "fake", "FAKE_ENV_", "ddl-fake: rank "};
  const std::string script = rank_script_head(names, 2, "FAKE_EXTRA") + "\"$@\"\n__ddl_rc=$?\n" +
                             rank_script_exit_line(names) + "exit \"$__ddl_rc\"\n";
  auto run = [&](const std::string& prefix) {
    ::setenv("DDL_TEST_SCRIPT", script.c_str(), 1);
    return test::run_shell(prefix + " FAKE_ENV_0=\"export A='zero'\" FAKE_ENV_1=\"export A='one'\" FAKE_EXTRA=x "
                                    "sh -c \"$DDL_TEST_SCRIPT\" ddl-rank sh -c "
                                    "'echo \"$A|${FAKE_ENV_0-unset}|${FAKE_EXTRA-unset}\"; exit 3' 2>&1");
  };
  CHECK(run("FAKE_RANK=1") == std::pair{3, std::string("one|unset|unset\nddl-fake: rank 1 exit 3\n")});
  CHECK(run("FAKE_RANK=") == std::pair{125, std::string("ddl: not started by fake\n")});
}

TEST_CASE("LauncherBackend: the gang starts at once; every signal_all is delivered", "[launcher]") {
  FakeLauncher backend("exit 0");
  std::filesystem::remove(backend.release);
  auto gang = gang_of(2);
  Recorder events;
  CHECK(backend.start(gang, events).error->message == "fake backend: start before prepare");
  REQUIRE(backend.prepare(plan_of(2), gang));
  GangStart started = backend.start(gang, events);
  REQUIRE_FALSE(started.error);
  CHECK(started.started == 2);
  REQUIRE(events.wait_for([&] { return events.out(1) == "world\n"; }));
  CHECK(events.started_count() == 2);
  // Two signals well within 500 ms: both reach the gang.
  backend.signal_all(SIGUSR1);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  backend.signal_all(SIGUSR1);
  REQUIRE(events.wait_for([&] { return events.out(0) == "hello\nusr1\nusr1\n"; }));
  CHECK(events.out(1) == "world\nusr1\nusr1\n");
  { std::FILE* f = std::fopen(backend.release.c_str(), "w"); std::fclose(f); }
  REQUIRE(events.wait_for([&] { return events.exit_count() == 2; }));
  for (const auto& [rank, how] : events.exits()) {
    CHECK(how.code == 0);
  }
  backend.shutdown();
  std::filesystem::remove(backend.release);
}

namespace {

// A gang of 3 under the fake launcher, released at once, ending as `end` says.
std::vector<std::pair<int, RankExit>> run_released(const std::string& end) {
  FakeLauncher backend(end);
  { std::FILE* f = std::fopen(backend.release.c_str(), "w"); std::fclose(f); }
  auto gang = gang_of(3);
  REQUIRE(backend.prepare(plan_of(3), gang));
  Recorder events;
  REQUIRE(backend.start(gang, events).started == 3);
  REQUIRE(events.wait_for([&] { return events.exit_count() == 3; }));
  backend.shutdown();
  std::filesystem::remove(backend.release);
  return events.exits();
}

} // namespace

TEST_CASE("LauncherBackend: the blamed rank's end, SIGTERM for the others, or the launcher's failure", "[launcher]") {
  SECTION("a rank's marker") {
    auto exits = run_released("echo 'ddl-fake: rank 1 exit 7' >&2; exit 1");
    CHECK(exits[0].first == 1);
    CHECK(exits[0].second.code == 7);
    CHECK(exits[1].second.code == 128 + SIGTERM);
    CHECK(exits[1].second.signal == SIGTERM);
    CHECK(exits[2].second.code == 128 + SIGTERM);
  }
  SECTION("the launcher failed on its own") {
    for (const auto& [rank, how] : run_released("echo 'no such host: h2'; exit 2")) {
      CHECK(how.code == 2);
      CHECK(how.launch_error == "fake-launcher failed (exit 2):\nno such host: h2");
    }
  }
}

TEST_CASE("LauncherBackend: a dumper's output is its rank's stderr, and it ends with the launcher", "[launcher]") {
  auto gang = gang_of(2);
  {
    FakeLauncher none("exit 0");
    std::filesystem::remove(none.release);
    REQUIRE(none.prepare(plan_of(2), gang));
    Recorder events;
    REQUIRE(none.start(gang, events).started == 2);
    REQUIRE(events.wait_for([&] { return events.out(1) == "world\n"; }));
    CHECK_FALSE(none.dump_stacks(1, DumpTool::gdb, Millis{5000}));  // no dump_command: the watchdog says so
    { std::FILE* f = std::fopen(none.release.c_str(), "w"); std::fclose(f); }
    REQUIRE(events.wait_for([&] { return events.exit_count() == 2; }));
    none.shutdown();
    std::filesystem::remove(none.release);
  }
  // The dumper of rank 1 prints, then hangs: the launcher's end ends it.
  FakeLauncher backend("exit 0", "echo \"stacks of rank $1 by $2\"; exec sleep 60");
  std::filesystem::remove(backend.release);
  REQUIRE(backend.prepare(plan_of(2), gang));
  Recorder events;
  REQUIRE(backend.start(gang, events).started == 2);
  REQUIRE(events.wait_for([&] { return events.out(1) == "world\n"; }));
  CHECK_FALSE(backend.dump_stacks(2, DumpTool::gdb, Millis{5000}));  // no such rank
  REQUIRE(backend.dump_stacks(1, DumpTool::gdb, Millis{5000}));
  REQUIRE(events.wait_for([&] { return events.err(1) == "stacks of rank 1 by gdb\n"; }));
  CHECK(events.err(0).empty());
  const auto released = std::chrono::steady_clock::now();
  { std::FILE* f = std::fopen(backend.release.c_str(), "w"); std::fclose(f); }
  REQUIRE(events.wait_for([&] { return events.exit_count() == 2; }));
  CHECK(std::chrono::steady_clock::now() - released < std::chrono::seconds(10));
  CHECK_FALSE(backend.dump_stacks(1, DumpTool::gdb, Millis{5000}));  // the launcher has ended
  backend.shutdown();
  std::filesystem::remove(backend.release);
}

TEST_CASE("LauncherBackend: the dry run shows the command, one word per line", "[launcher]") {
  FakeLauncher backend("exit 0");
  auto gang = gang_of(2);
  std::string text = backend.dry_run_text(gang);
  INFO(text);
  CHECK(text.starts_with("fake-launcher command (a test double):\n  sh \\\n    -c \\\n"));
  CHECK(text.ends_with("    fake \\\n    '<hostfile>' \\\n    2\n"));
}

namespace {

// TEST DOUBLE: a per-rank backend whose hosts named "down*" fail the preflight.
class PreflightOnly final : public PerRankBackend {
public:
  std::string_view name() const override { return "preflight"; }
  void shutdown() override {}

protected:
  Result<void> preflight_unit(std::size_t unit, const Plan& plan, std::span<const RankLaunch>) override {
    const std::string& host = plan.hosts[unit].name;
    if (host.starts_with("down")) {
      return fail(ExitCode::launch, host + " is down");
    }
    return {};
  }
  Result<void> start_rank(const RankLaunch&, RankEvents&) override { return {}; }
  void signal_rank(int, int) override {}
};

} // namespace

TEST_CASE("PerRankBackend: one report of every host that cannot start", "[launcher]") {
  Plan plan;
  for (const char* name : {"up-0", "down-1", "up-2", "down-3"}) {
    plan.hosts.push_back(Host{name, name, 1, {}, "list"});
  }
  PreflightOnly backend;
  auto prepared = backend.prepare(plan, {});
  REQUIRE_FALSE(prepared);
  CHECK(prepared.error().code == ExitCode::launch);
  CHECK(prepared.error().message ==
        "cannot start on 2 of 4 hosts:\n  down-1: down-1 is down\n  down-3: down-3 is down");
  plan.hosts = {Host{"up-0", "up-0", 1, {}, "list"}};
  CHECK(backend.prepare(plan, {}));
}
