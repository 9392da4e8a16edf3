// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "src/util/process.hpp"

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
