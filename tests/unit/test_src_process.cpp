// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>

#include "src/util/process.hpp"
#include "src/util/process_set.hpp"

using namespace ddl;

namespace {

SpawnSpec shell(const std::string& script) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = environment_with({"DDL_PROCESS_TEST=yes"});
  return spec;
}

struct Run {
  ProcessExit exit;
  std::string out;
  std::string err;
};

Run run_to_end(ChildProcess child) {
  Run run;
  int status = pump_output(child, [&](OutputStream stream, std::string_view bytes) {
    (stream == OutputStream::out ? run.out : run.err).append(bytes);
  });
  run.exit = process_exit(status);
  return run;
}

} // namespace

TEST_CASE("spawn_process", "[process]") {
  SECTION("pipes stdout and stderr, passes the environment, reports the exit code") {
    auto started = spawn_process(shell("echo out $DDL_PROCESS_TEST; echo err >&2; exit 3"));
    REQUIRE(started);
    Run run = run_to_end(started.child);
    CHECK(run.out == "out yes\n");
    CHECK(run.err == "err\n");
    CHECK(run.exit.code == 3);
    CHECK(run.exit.signal == 0);
  }
  SECTION("stdin is /dev/null unless piped") {
    auto started = spawn_process(shell("cat; echo end"));
    REQUIRE(started);
    CHECK(started.child.in_fd == -1);
    CHECK(run_to_end(started.child).out == "end\n");
  }
  SECTION("no descriptor of ours but 0-2 reaches the child") {
    int leaked[2];
    REQUIRE(::pipe(leaked) == 0);  // not CLOEXEC on purpose
    auto started = spawn_process(shell("ls /proc/self/fd | wc -l"));
    ::close(leaked[0]);
    ::close(leaked[1]);
    REQUIRE(started);
    // 0, 1, 2 and the directory ls reads.
    CHECK(run_to_end(started.child).out == "4\n");
  }
  SECTION("an unknown program fails at the exec stage with its errno") {
    SpawnSpec spec = shell("");
    spec.argv = {"ddl-no-such-program"};
    auto started = spawn_process(spec);
    REQUIRE_FALSE(started);
    CHECK(started.failure.stage == SpawnStage::exec);
    CHECK(started.failure.error == ENOENT);
  }
  SECTION("a missing workdir fails at the chdir stage") {
    SpawnSpec spec = shell("true");
    spec.workdir = "/nonexistent/ddl";
    auto started = spawn_process(spec);
    REQUIRE_FALSE(started);
    CHECK(started.failure.stage == SpawnStage::chdir);
  }
  SECTION("a new session makes the child its own group leader") {
    SpawnSpec spec = shell("ps -o sid= -p $$ | tr -d ' '; echo $$");
    spec.group = ProcessGroup::new_session;
    auto started = spawn_process(spec);
    REQUIRE(started);
    std::string pid = std::to_string(started.child.pid);
    CHECK(run_to_end(started.child).out == pid + "\n" + pid + "\n");
  }
}

TEST_CASE("process_exit", "[process]") {
  auto started = spawn_process(shell("kill -TERM $$"));
  REQUIRE(started);
  ProcessExit how = run_to_end(started.child).exit;
  CHECK(how.signal == SIGTERM);
  CHECK(how.code == 128 + SIGTERM);
}

namespace {

// A ProcessSet child as the test sees it.
struct Watched final : ChildEvents {
  void output(OutputStream stream, std::string_view bytes) override {
    (stream == OutputStream::out ? out : err).append(bytes);
  }
  void exited(int) override { exited_first = !ended_yet; }
  void ended(int wait_status) override {
    ended_yet = true;
    status = wait_status;
  }
  std::string out;
  std::string err;
  bool exited_first = false;
  bool ended_yet = false;
  int status = 0;
};

SpawnSpec group_shell(const std::string& script) {
  SpawnSpec spec = shell(script);
  spec.group = ProcessGroup::new_group;
  return spec;
}

// Runs the set until every child has ended, or `limit` passes.
bool run_set(ProcessSet& set, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (set.size() > 0 && std::chrono::steady_clock::now() < until) {
    set.run_once(100);
  }
  return set.size() == 0;
}

} // namespace

TEST_CASE("ProcessSet", "[process]") {
  SECTION("children take turns; each ends once, after its last output") {
    ProcessSet set;
    Watched a;
    Watched b;
    auto first = spawn_process(shell("printf 'a%.0s' $(seq 1 20000); echo done >&2; exit 3"));
    auto second = spawn_process(shell("echo b; exit 0"));
    REQUIRE(first);
    REQUIRE(second);
    set.add(first.child, a);
    set.add(second.child, b);
    CHECK(first.child.out_fd == -1);  // the set owns the pipes now
    REQUIRE(run_set(set, std::chrono::seconds(20)));
    CHECK(a.out == std::string(20000, 'a'));
    CHECK(a.err == "done\n");
    CHECK(process_exit(a.status).code == 3);
    CHECK(b.out == "b\n");
    CHECK(a.exited_first);
  }
  SECTION("what a child leaves in its group dies with it") {
    ProcessSet set;
    Watched child;
    auto spawned = spawn_process(group_shell("sleep 30 & echo left; exit 0"));
    REQUIRE(spawned);
    set.add(spawned.child, child, {.kill_group_at_exit = true, .drain_after_exit = std::chrono::seconds(5)});
    auto begin = std::chrono::steady_clock::now();
    REQUIRE(run_set(set, std::chrono::seconds(20)));
    CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(4));
    CHECK(child.out == "left\n");
  }
  SECTION("pipes an escaped process holds are read for the drain, then given up") {
    ProcessSet set;
    Watched child;
    auto spawned = spawn_process(group_shell("setsid sh -c 'echo $$ >&2; sleep 0.5; echo late; exec sleep 30' & sleep 0.2; exit 0"));
    REQUIRE(spawned);
    set.add(spawned.child, child, {.kill_group_at_exit = true, .drain_after_exit = std::chrono::milliseconds(800)});
    auto begin = std::chrono::steady_clock::now();
    REQUIRE(run_set(set, std::chrono::seconds(20)));
    CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(4));
    CHECK(child.out == "late\n");
    if (auto escaped = std::atoi(child.err.c_str()); escaped > 0) {
      ::kill(escaped, SIGKILL);
    }
  }
  SECTION("signal reaches a running child, not one that has exited") {
    ProcessSet set;
    Watched child;
    auto spawned = spawn_process(group_shell("trap 'echo usr1; exit 5' USR1; echo up; while :; do sleep 0.05; done"));
    REQUIRE(spawned);
    const pid_t pid = spawned.child.pid;
    set.add(spawned.child, child);
    while (child.out.empty()) {
      set.run_once(100);
    }
    CHECK(set.signal(pid, SIGUSR1, false));
    REQUIRE(run_set(set, std::chrono::seconds(20)));
    CHECK(child.out == "up\nusr1\n");
    CHECK(process_exit(child.status).code == 5);
    CHECK_FALSE(set.signal(pid, SIGUSR1, false));
  }
}
