// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <vector>

#include "backends/slurm/srun_command.hpp"
#include "backends/slurm/srun_output.hpp"
#include "tests/unit/shell_run.hpp"

using namespace ddl;

namespace {

std::vector<RankLaunch> two_ranks() {
  std::vector<RankLaunch> launches(2);
  for (int r = 0; r < 2; ++r) {
    auto& launch = launches[static_cast<std::size_t>(r)];
    launch.rank = r;
    launch.host.name = r == 0 ? "n1" : "n2";
    launch.argv = {"python3", "train.py"};
    launch.env = {{"SHARED", "same"}, {"RANK", std::to_string(r)}, {"SECRET", "it's"}};
  }
  return launches;
}

} // namespace

TEST_CASE("srun command: placement in a hostfile, values only in the environment", "[slurm]") {
  auto launches = two_ranks();
  slurm::SrunSettings settings;
  settings.hostfile = "/tmp/x/hostfile";
  settings.srun_args = {"--cpu-bind=none"};
  auto command = slurm::build_srun_command(launches, settings);
  REQUIRE(command);
  const auto& argv = command->argv;
  auto at = std::find(argv.begin(), argv.end(), "srun");
  REQUIRE(at != argv.end());
  CHECK(*(at + 1) == "--cpu-bind=none");
  CHECK(std::find(argv.begin(), argv.end(), "--distribution=arbitrary") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--kill-on-bad-exit=1") != argv.end());
  CHECK(argv.back() == "train.py");
  for (const auto& word : argv) {
    CHECK(word.find("it's") == std::string::npos);
  }
  CHECK(slurm::srun_hostfile(launches) == "n1\nn2\n");
  auto has = [&](const std::string& name, const std::string& value) {
    return std::find(command->env.begin(), command->env.end(), std::pair{name, value}) != command->env.end();
  };
  CHECK(has("SLURM_HOSTFILE", "/tmp/x/hostfile"));
  CHECK(has("SHARED", "same"));
  CHECK(has("SECRET", "it's"));
  CHECK(has("DDL_SLURM_ENV_0", "export RANK='0'\n"));
  CHECK(has("DDL_SLURM_ENV_1", "export RANK='1'\n"));
}

TEST_CASE("srun --label output: lines to ranks, markers out, the first own failure", "[slurm]") {
  std::vector<std::string> got;
  slurm::LabeledOutput output(12, [&](int rank, Stream stream, std::string_view bytes) {
    got.push_back(std::to_string(rank) + (stream == Stream::out ? " out " : " err ") + std::string(bytes));
  });
  output.feed(Stream::out, " 0: hello\n11: wor");
  output.feed(Stream::out, "ld\n");
  output.feed(Stream::err, " 0: ddl-slurm: step 7.2\n");
  output.feed(Stream::err, "srun: error: h2: task 3: Exited with exit code 3\n");
  output.feed(Stream::err, " 5: ddl-slurm: rank 5 exit 143\n 3: ddl-slurm: rank 3 exit 3\n 3: oops: 1\n");
  output.feed(Stream::out, " 4: no newline");
  output.finish();
  CHECK(got == std::vector<std::string>{"0 out hello\n", "11 out world\n", "3 err oops: 1\n", "4 out no newline"});
  CHECK(output.step() == "7.2");
  REQUIRE(output.first_failure());
  CHECK(*output.first_failure() == std::pair{3, 3});
  CHECK(output.launcher_text() == "srun: error: h2: task 3: Exited with exit code 3\n");
}

TEST_CASE("srun --label output: srun's own report when the marker is lost", "[slurm]") {
  slurm::LabeledOutput output(4, [](int, Stream, std::string_view) {});
  output.feed(Stream::err, " 1: ddl-slurm: rank 1 exit 143\n");
  output.feed(Stream::err, "srun: error: h3: task 2: Exited with exit code 3\n");
  output.finish();
  REQUIRE(output.first_failure());
  CHECK(*output.first_failure() == std::pair{2, 3});
}

TEST_CASE("srun --label output: Open MPI's MPI_Abort when the step's cancel took the marker", "[slurm]") {
  slurm::LabeledOutput output(4, [](int, Stream, std::string_view) {});
  output.feed(Stream::err, " 0: slurmstepd-h1: error: *** STEP 4.0 ON h1 CANCELLED AT 2026-11-26T07:11:19 ***\n");
  output.feed(Stream::err, " 3: MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\n");
  output.feed(Stream::err, " 2: with errorcode 9.\n");  // another rank's line between changes nothing
  output.feed(Stream::err, " 3: with errorcode 6.\n");
  output.feed(Stream::err, " 0: ddl-slurm: rank 0 exit 143\n");
  output.finish();
  REQUIRE(output.first_failure());
  CHECK(*output.first_failure() == std::pair{3, 6});
  auto blame = output.blame(RankExit{143, 0, ""}, {});
  REQUIRE(blame);
  CHECK(blame->rank == 3);
  CHECK(blame->how.code == 6);
}

// A task that srun could not launch (Slurm's mpi/pmix plugin failing on a
// node) aborts the step: slurmstepd cancels the ranks already up, which is
// srun's doing, not scancel, a time limit or preemption (issue 40, item 10).
TEST_CASE("srun --label output: a launch failure is blamed on the launch, not on a cancel", "[slurm]") {
  std::vector<RankLaunch> launches(4);
  for (int r = 0; r < 4; ++r) {
    launches[static_cast<std::size_t>(r)].rank = r;
    launches[static_cast<std::size_t>(r)].host.name = r < 2 ? "h1" : "h2";
  }
  for (const char* stopped : {"137", "143"}) {
    slurm::LabeledOutput output(4, [](int, Stream, std::string_view) {});
    output.feed(Stream::err, " 0: slurmstepd-h1: error: *** STEP 1.0 ON h1 CANCELLED AT 2026-11-28T09:55:06 ***\n");
    output.feed(Stream::err, "srun: error: task 2 launch failed: Unspecified error\n"
                             "srun: error: task 3 launch failed: Unspecified error\n"
                             "srun: launch/slurm: launch_p_step_launch: StepId=1.0 aborted before step completely "
                             "launched.\nsrun: Job step aborted: Waiting up to 7 seconds for job step to finish.\n"
                             "srun: forcing job termination\n");
    output.feed(Stream::err, std::string(" 1: ddl-slurm: rank 1 exit ") + stopped + "\n");
    output.feed(Stream::err, std::string("srun: error: h1: tasks 0-1: Exited with exit code ") + stopped + "\n");
    CHECK(output.take_ended() == std::vector<std::pair<int, int>>{{1, 143}});
    output.finish();
    auto blame = output.blame(RankExit{137, 9, ""}, launches);
    REQUIRE(blame);
    CHECK(blame->rank == 2);
    CHECK(blame->how.launch_error == "srun could not launch it: task 2 launch failed: Unspecified error");
    CHECK(blame->how.stopped_by.empty());
    CHECK(output.exit_of_code(143).stopped_by.empty());
  }
  // A cancel with no launch failure is still Slurm's (scancel, time limit, preemption).
  slurm::LabeledOutput cancelled(4, [](int, Stream, std::string_view) {});
  cancelled.feed(Stream::err, " 0: slurmstepd-h1: error: *** STEP 1.0 ON h1 CANCELLED AT 2026-11-28T09:55:06 ***\n");
  cancelled.finish();
  CHECK(cancelled.exit_of_code(143).stopped_by ==
        "Slurm cancelled the step (scancel, the time limit or preemption): STEP 1.0 ON h1 CANCELLED AT 2026-11-28T09:55:06");
  // Slurm's own word for a node: "Task launch for StepId=... failed on node".
  slurm::LabeledOutput output(4, [](int, Stream, std::string_view) {});
  output.feed(Stream::err, "srun: error: Task launch for StepId=9.0 failed on node h2: Invalid job credential\n");
  output.finish();
  auto blame = output.blame(RankExit{1, 0, ""}, launches);
  REQUIRE(blame);
  CHECK(blame->rank == 2);
  CHECK(blame->how.launch_error ==
        "srun could not launch it: Task launch for StepId=9.0 failed on node h2: Invalid job credential");
}

TEST_CASE("srun --label output: each rank's end once, as it comes", "[slurm]") {
  slurm::LabeledOutput output(4, [](int, Stream, std::string_view) {});
  CHECK(output.take_ended().empty());
  output.feed(Stream::err, " 2: ddl-slurm: rank 2 exit 130\n");
  CHECK(output.take_ended() == std::vector<std::pair<int, int>>{{2, 130}});
  // srun's word for the same rank, and a later marker, change nothing.
  output.feed(Stream::err, "srun: error: h3: task 2: Exited with exit code 130\n");
  output.feed(Stream::err, " 1: ddl-slurm: rank 1 exit 3\n 0: ddl-slurm: rank 0 exit 143\n");
  CHECK(output.take_ended() == std::vector<std::pair<int, int>>{{1, 3}, {0, 143}});
  CHECK(output.take_ended().empty());
}

TEST_CASE("srun rank script: a rank stopped by a signal is no bad exit to srun", "[slurm]") {
  // The wrapper as srun runs it (rank 1 of 2), around RANK_COMMAND: its
  // exit status and its stderr (the marker).
  auto run = [](const std::string& rank_command) {
    const std::string script = slurm::rank_script(2);
    setenv("DDL_TEST_RANK_SCRIPT", script.c_str(), 1);
    setenv("DDL_TEST_RANK_COMMAND", rank_command.c_str(), 1);
    return test::run_shell("SLURM_PROCID=1 SLURM_JOB_ID=7 SLURM_STEP_ID=0 "
                           "sh -c \"$DDL_TEST_RANK_SCRIPT\" ddl-rank sh -c \"$DDL_TEST_RANK_COMMAND\" 2>&1");
  };
  // A failure on its own: its code, to srun and in the marker.
  CHECK(run("exit 7") == std::pair{7, std::string("ddl-slurm: rank 1 exit 7\n")});
  CHECK(run("exit 1") == std::pair{1, std::string("ddl-slurm: rank 1 exit 1\n")});
  // The wrapper got the stop signal too (Slurm signals every process): 0
  // to srun, the rank's own code in the marker.
  CHECK(run("kill -INT $PPID; sleep 0.2; exit 7") == std::pair{0, std::string("ddl-slurm: rank 1 exit 7\n")});
  // Killed by SIGINT before the wrapper's turn came: no bad exit either.
  CHECK(run("kill -INT $$") == std::pair{0, std::string("ddl-slurm: rank 1 exit 130\n")});
  // SIGTERM alone is a bad exit (a rank killed on its node), and SIGUSR1
  // to the wrapper does not end it.
  auto [code, said] = run("kill -TERM $$");
  CHECK(code == 143);
  CHECK(said.ends_with("ddl-slurm: rank 1 exit 143\n"));
  CHECK(run("kill -USR1 $PPID; sleep 0.2; echo on") == std::pair{0, std::string("on\n")});
}
