// SPDX-License-Identifier: MIT
// The hang watchdog (issue 17): job keys, progress, stall and straggler
// detection, the rendezvous HEARTBEAT.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include <fmt/core.h>

#include "src/job/job.hpp"
#include "src/launch/watchdog.hpp"
#include "src/util/rank_list.hpp"
#include "tests/unit/rendezvous_test_util.hpp"

using namespace ddl;
using std::chrono::milliseconds;

namespace {

std::string errors(std::string_view text) {
  auto job = parse_job(text, "job.toml", {});
  return job ? "" : job.error().message;
}

WatchdogSection stall_after(milliseconds stall) {
  WatchdogSection watchdog;
  watchdog.stall = stall;
  return watchdog;
}

} // namespace

TEST_CASE("[watchdog] and the stop keys load, with defaults", "[watchdog][job]") {
  auto job = parse_job("[job]\ncommand = \"true\"\ncheckpoint_signal = \"SIGUSR1\"\ncheckpoint_grace = \"5s\"\n"
                       "stop_signal = \"INT\"\nrequeue_exit_code = 85\n"
                       "[watchdog]\nstall = \"2s\"\nprogress = \"step \\\\d+\"\nstraggler = \"1s\"\n"
                       "dump = \"SIGUSR2\"\ndump_timeout = \"3s\"\n",
                       "job.toml", {});
  REQUIRE(job);
  CHECK(job->stop.checkpoint_signal == 10);
  CHECK(job->stop.checkpoint_grace == milliseconds(5000));
  CHECK(job->stop.stop_signal == 2);
  CHECK(job->stop.requeue_exit_code == 85);
  CHECK(job->watchdog.stall == milliseconds(2000));
  CHECK(job->watchdog.straggler == milliseconds(1000));
  CHECK(job->watchdog.progress == ProgressSource::regex);
  CHECK(job->watchdog.progress_regex == "step \\d+");
  CHECK(job->watchdog.dump_signal == 12);
  CHECK(job->watchdog.dump_timeout == milliseconds(3000));

  auto plain = parse_job("[job]\ncommand = \"true\"\n", "job.toml", {});
  REQUIRE(plain);
  CHECK_FALSE(plain->watchdog.enabled());
  CHECK(plain->stop.stop_signal == 15);
  CHECK(plain->stop.checkpoint_signal == 0);
  CHECK(plain->watchdog.dump_signal == 0);
  CHECK(plain->watchdog.dump_tool == DumpTool::automatic);  // py-spy, gdb, then faulthandler
  for (auto [text, tool] : {std::pair{"gdb", DumpTool::gdb}, std::pair{"py-spy", DumpTool::py_spy},
                            std::pair{"auto", DumpTool::automatic}}) {
    auto chosen = parse_job(fmt::format("[job]\ncommand = \"true\"\n[watchdog]\nstall = \"2s\"\ndump = \"{}\"\n", text),
                            "job.toml", {});
    REQUIRE(chosen);
    CHECK(chosen->watchdog.dump_tool == tool);
    CHECK(chosen->watchdog.dump_signal == 0);
  }
  CHECK(plain->watchdog.dump_timeout == milliseconds(30000));
}

TEST_CASE("bad [watchdog] and stop values are errors with their place", "[watchdog][job]") {
  CHECK(errors("[watchdog]\nstall = \"2s\"\nprogress = \"(\"\n") ==
        "job.toml:3:12: watchdog.progress: not a valid RE2 regular expression: missing ): (");
  // What a backtracking engine has and RE2 has not: refused, with RE2's reason.
  CHECK(errors("[watchdog]\nstall = \"2s\"\nprogress = '(a)\\1'\n") ==
        "job.toml:3:12: watchdog.progress: not a valid RE2 regular expression: invalid escape sequence: \\1");
  CHECK(errors("[watchdog]\nstall = \"2s\"\nprogress = '(?=step)'\n") ==
        "job.toml:3:12: watchdog.progress: not a valid RE2 regular expression: invalid perl operator: (?=");
  CHECK(errors("[watchdog]\nstall = \"2s\"\ndump = \"lldb\"\n") ==
        "job.toml:3:8: watchdog.dump: 'lldb' is neither \"auto\", \"py-spy\", \"gdb\" nor a signal name such as "
        "\"SIGUSR1\"");
  CHECK(errors("[watchdog]\nprogress = \"step\"\n") ==
        "job.toml:2:12: watchdog.progress: needs watchdog.stall or watchdog.straggler");
  CHECK(errors("[job]\nstop_signal = \"SIGKILL\"\n") ==
        "job.toml:2:15: job.stop_signal: 'SIGKILL' is not a signal a program can catch (e.g. \"SIGUSR1\")");
  CHECK(errors("[job]\ncheckpoint_grace = \"5s\"\n") == "job.toml:2:20: job.checkpoint_grace: needs job.checkpoint_signal");
  CHECK(errors("[job]\nrequeue_exit_code = 0\n").starts_with("job.toml:2:21: job.requeue_exit_code: must be"));
  CHECK(errors("[watchdog]\nstall = \"0s\"\n") == "job.toml:2:9: watchdog.stall: must be longer than 0");
}

TEST_CASE("a stall: no running rank made progress for `stall`", "[watchdog]") {
  auto t0 = WatchClock::now();
  auto watchdog = stall_after(milliseconds(2000));
  std::vector<WatchClock::time_point> last{t0, t0 + milliseconds(500)};
  std::vector<bool> running{true, true};
  CHECK_FALSE(find_hang(watchdog, last, running, t0 + milliseconds(2499)));
  auto hang = find_hang(watchdog, last, running, t0 + milliseconds(2500));
  REQUIRE(hang);
  CHECK_FALSE(hang->straggler);
  CHECK(hang->ranks == std::vector<int>{0, 1});
  // An exited rank is not named and its progress does not count.
  running = {false, true};
  last = {t0 + milliseconds(3000), t0};
  hang = find_hang(watchdog, last, running, t0 + milliseconds(2000));
  REQUIRE(hang);
  CHECK(hang->ranks == std::vector<int>{1});
  CHECK_FALSE(find_hang(watchdog, last, {false, false}, t0 + milliseconds(9000)));
}

TEST_CASE("a straggler lags the newest progress by `straggler`", "[watchdog]") {
  auto t0 = WatchClock::now();
  WatchdogSection watchdog;
  watchdog.straggler = milliseconds(1000);
  std::vector<WatchClock::time_point> last{t0 + milliseconds(1500), t0 + milliseconds(1400), t0};
  auto hang = find_hang(watchdog, last, {true, true, true}, t0 + milliseconds(1600));
  REQUIRE(hang);
  CHECK(hang->straggler);
  CHECK(hang->ranks == std::vector<int>{2});
  // One running rank cannot straggle.
  CHECK_FALSE(find_hang(watchdog, last, {false, false, true}, t0 + milliseconds(9000)));
}

TEST_CASE("progress: any output, a matching line, or a heartbeat", "[watchdog]") {
  WatchdogSection regex = stall_after(milliseconds(1000));
  regex.progress = ProgressSource::regex;
  regex.progress_regex = "step \\d+";
  ProgressBoard board(2, regex);
  auto before = board.last_progress(0);
  std::this_thread::sleep_for(milliseconds(5));
  board.bytes(0);
  board.line(0, "loss 0.3");
  CHECK(board.last_progress(0) == before);
  CHECK(board.last_line(0) == "loss 0.3");
  board.line(0, "step 12 loss 0.2");
  CHECK(board.last_progress(0) > before);
  // Only the first k_progress_match_bytes of a line are searched.
  auto rank1 = board.last_progress(1);
  std::this_thread::sleep_for(milliseconds(5));
  board.line(1, std::string(k_progress_match_bytes, 'x') + "step 1");
  CHECK(board.last_progress(1) == rank1);
  board.line(1, std::string(65536, '.') + "x");
  board.heartbeat(1);
  CHECK(board.last_progress(1) > rank1);

  ProgressBoard any(1, stall_after(milliseconds(1000)));
  auto first = any.last_progress(0);
  std::this_thread::sleep_for(milliseconds(5));
  any.bytes(0);
  CHECK(any.last_progress(0) > first);

  // Evidence: only what comes after start_evidence().
  any.line(0, "before");
  CHECK(any.evidence(0).empty());
  any.start_evidence();
  any.line(0, "Thread 0x1 (most recent call first):");
  CHECK(any.evidence(0) == std::vector<std::string>{"Thread 0x1 (most recent call first):"});
  CHECK(any.last_evidence());
}

TEST_CASE("progress patterns that backtrack for ever match a long line at once", "[watchdog]") {
  // A backtracking engine never returns from these on 1000 'a's (the test
  // would hang); RE2 answers in linear time.
  const std::vector<std::pair<std::string, bool>> patterns{
      {"(a|aa)*c", false}, {"(\\w+\\s?)*$", true}, {"^(a+)+$b", false}};
  for (const auto& [text, matches] : patterns) {
    WatchdogSection watchdog = stall_after(milliseconds(1000));
    watchdog.progress = ProgressSource::regex;
    watchdog.progress_regex = text;
    ProgressBoard board(1, watchdog);
    auto before = board.last_progress(0);
    std::this_thread::sleep_for(milliseconds(5));
    board.line(0, std::string(k_progress_match_bytes, 'a'));
    CHECK((board.last_progress(0) > before) == matches);
  }
}

TEST_CASE("the hang report names ranks, hosts, last lines and dumps", "[watchdog]") {
  ProgressBoard board(3, stall_after(milliseconds(1000)));
  board.line(0, "step 7");
  board.start_evidence();
  board.line(2, "  File \"train.py\", line 3 in <module>");
  std::vector<RankLaunch> launches(3);
  launches[0].host.name = "a";
  launches[1].host.name = "a";
  launches[2].host.name = "b";
  Hang hang{false, {0, 1, 2}, milliseconds(2000)};
  CHECK(hang_report(hang, board, launches, {"note"}) ==
        "ddl: error: stalled ranks: 0-2\n"
        "ddl: rank 0: last line: step 7\n"
        "ddl: rank 1: last line: (none)\n"
        "ddl: rank 2: File \"train.py\", line 3 in <module>\n"
        "ddl: rank 0 on a: last line: step 7\n"
        "ddl: rank 1 on a: last line: (none)\n"
        "ddl: rank 2 on b: last line: (none)\n"
        "ddl: note\n"
        "ddl: stack dump of rank 2 (1 line):\n"
        "  [2]   File \"train.py\", line 3 in <module>\n");
  CHECK(compress_ranks({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  WatchdogSection watchdog = stall_after(milliseconds(2000));
  CHECK(hang_announcement(watchdog, hang, "SIGUSR1") ==
        "ddl: watchdog: no rank made progress for 2s (watchdog.stall = 2s); asking every rank for its stacks "
        "(SIGUSR1) for up to 30s, then ending the attempt (exit 5)\n");
}

TEST_CASE("innermost frames of faulthandler, py-spy and gdb dumps", "[watchdog]") {
  // faulthandler (SIGABRT or register): the current thread's innermost frame.
  CHECK(innermost_frames({"Fatal Python error: Aborted", "", "Thread 0x00007f1 (most recent call first):",
                          "  File \"/usr/lib/python3/threading.py\", line 320 in wait",
                          "Current thread 0x00007f2 (most recent call first):",
                          "  File \"/t/job.py\", line 9 in all_reduce", "  File \"/t/job.py\", line 14 in <module>"}) ==
        "File \"/t/job.py\", line 9 in all_reduce");
  // py-spy: the MainThread's first frame.
  CHECK(innermost_frames({"Process 12: python3 job.py", "Thread 13 (idle): \"Thread-1\"", "    wait (threading.py:320)",
                          "Thread 12 (idle): \"MainThread\"", "    sleep (job.py:7)", "    <module> (job.py:12)"}) ==
        "sleep (job.py:7)");
  // gdb: thread 1's three innermost functions, addresses and arguments left out.
  CHECK(innermost_frames({"ddl: stacks of pid 5 on h by gdb:", "Thread 2 (Thread 0x7f (LWP 6) \"a.out\"):",
                          "#0  0x00007f00 in futex_wait () from /lib/libc.so.6",
                          "Thread 1 (Thread 0x7e (LWP 5) \"a.out\"):",
                          "#0  0x00007f01 in __GI___clock_nanosleep (clockid=0) at nanosleep.c:48",
                          "#1  0x00007f02 in __GI___nanosleep (req=0x7ff) at nanosleep.c:25",
                          "#2  0x00005503 in stuck_in_here (n=1) at stuck.c:5", "#3  0x00005504 in main () at stuck.c:9"}) ==
        "in __GI___clock_nanosleep < __GI___nanosleep < stuck_in_here");
  CHECK(innermost_frames({"ddl: gdb is not installed on h; no stack dump of pid 5"}) == std::nullopt);
}

TEST_CASE("the odd ones out are suspects; no majority, no suspect", "[watchdog]") {
  auto groups = group_by_place({0, 1, 2, 3}, {"in all_reduce", "in sleep", "in all_reduce", "in all_reduce"});
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].suspect);
  CHECK(groups[0].ranks == std::vector<int>{1});
  CHECK(groups[0].where == "in sleep");
  CHECK_FALSE(groups[1].suspect);
  CHECK(groups[1].ranks == std::vector<int>{0, 2, 3});
  auto tie = group_by_place({0, 1}, {"in a", "in b"});
  REQUIRE(tie.size() == 2);
  CHECK_FALSE(tie[0].suspect);
  CHECK_FALSE(tie[1].suspect);
  auto lag = lagging_steps({0, 1, 2, 3}, {5, 4, 5, std::nullopt});
  REQUIRE(lag.size() == 1);
  CHECK(lag[0].ranks == std::vector<int>{1});
  CHECK(lag[0].where == "at step 4 while ranks 0,2 reached step 5");
}

TEST_CASE("the report names the suspect first, then the majority; the step lag from the progress pattern",
          "[watchdog]") {
  WatchdogSection watchdog = stall_after(milliseconds(1000));
  watchdog.progress = ProgressSource::regex;
  watchdog.progress_regex = "step (\\d+)";
  ProgressBoard board(4, watchdog);
  for (int rank = 0; rank < 4; ++rank) {
    board.line(rank, fmt::format("rank {} step {}", rank, rank == 1 ? 3 : 4));
  }
  CHECK(board.step(1) == 3);
  CHECK(board.step(0) == 4);
  board.start_evidence();
  for (int rank = 0; rank < 4; ++rank) {
    board.line(rank, "Current thread 0x01 (most recent call first):");
    board.line(rank, rank == 1 ? "  File \"job.py\", line 7 in <module>" : "  File \"c10d.py\", line 9 in all_reduce");
  }
  std::vector<RankLaunch> launches(4);
  for (int rank = 0; rank < 4; ++rank) {
    launches[static_cast<std::size_t>(rank)].host.name = rank < 2 ? "a" : "b";
  }
  Hang hang{false, {0, 1, 2, 3}, milliseconds(2000)};
  std::string report = hang_report(hang, board, launches, {});
  CHECK(report.starts_with("ddl: error: stalled ranks: 0-3\n"
                           "ddl: suspect: rank 1 on a: at step 3 while ranks 0,2-3 reached step 4\n"
                           "ddl: suspect: rank 1 on a: File \"job.py\", line 7 in <module>\n"
                           "ddl: ranks 0,2-3: File \"c10d.py\", line 9 in all_reduce\n"));
  CHECK(dump_signal_death(1, "a", 10) ==
        "rank 1 on a: killed by the dump signal SIGUSR1 (no handler for it); a Python program answers it after "
        "`faulthandler.register(signal.SIGUSR1, all_threads=True)`, or leave watchdog.dump out (auto)");
}

TEST_CASE("native stacks: ranks polling in one call are alike, the odd one out is the suspect", "[watchdog]") {
  // An MPI barrier: ranks 0, 2 and 3 poll Open MPI's progress engine, each
  // caught somewhere else in it; rank 1 sleeps before the barrier.
  std::vector<std::vector<std::string>> stacks{
      {"opal_progress", "ompi_request_default_wait_all", "ompi_coll_base_barrier_intra_basic_linear", "PMPI_Barrier",
       "main"},
      {"__GI___clock_nanosleep", "__GI___nanosleep", "__sleep", "main"},
      {"??", "opal_progress", "mca_pml_ob1_recv", "ompi_coll_base_barrier_intra_basic_linear", "PMPI_Barrier", "main"},
      {"??", "??", "opal_progress", "mca_pml_ob1_recv", "ompi_coll_base_barrier_intra_basic_linear", "PMPI_Barrier",
       "main"}};
  auto places = native_places({0, 1, 2, 3}, stacks);
  CHECK(places[0] == "in ompi_coll_base_barrier_intra_basic_linear < PMPI_Barrier < main");
  CHECK(places[2] == places[0]);
  CHECK(places[3] == places[0]);
  CHECK(places[1] == "in __GI___nanosleep < __sleep < main");
  // Nothing shared by a majority: each rank's own innermost three.
  auto apart = native_places({0, 1}, {{"f", "a"}, {"g", "h", "i", "b"}});
  CHECK(apart[0] == "in f < a");
  CHECK(apart[1] == "in g < h < i");
  CHECK(native_stack({"Thread 1 (Thread 0x7e (LWP 5) \"a.out\"):", "#0  0x00007f01 in pause () from /lib/libc.so.6",
                      "#1  0x00005503 in main () at stuck.c:9"}) == std::vector<std::string>{"pause", "main"});
  CHECK(native_stack({"Current thread 0x01 (most recent call first):", "  File \"job.py\", line 7 in <module>"})
            .empty());
}

TEST_CASE("ProgressBoard under --mpi pmix: the board watches MPI ranks from their tags and names them in the report", "[watchdog]") {
  ProgressBoard board(2, stall_after(milliseconds(1000)));
  board.watch_mpi_ranks({3, 1});  // host 0: MPI ranks 0-2, host 1: rank 3
  REQUIRE(board.world_size() == 4);
  CHECK(board.gang_rank(0) == 0);
  CHECK(board.gang_rank(2) == 0);
  CHECK(board.gang_rank(3) == 1);
  const auto before = board.last_progress(1);
  std::this_thread::sleep_for(milliseconds(5));
  board.bytes(0);  // bytes name no MPI rank
  CHECK(board.last_progress(1) == before);
  board.line(0, "[1] rank 1 up");
  CHECK(board.last_progress(1) > before);
  CHECK(board.last_progress(0) == before);
  CHECK(board.last_line(1) == "rank 1 up");
  board.line(1, "[3] rank 3 up");
  board.heartbeat(0);  // a worker's heartbeat speaks for its host's ranks
  CHECK(board.last_progress(2) > before);
  board.start_evidence();
  for (int rank = 0; rank < 3; ++rank) {
    board.line(0, fmt::format("ddl: MPI rank {} (pid {}) on h:", rank, 100 + rank));
    board.line(0, "Thread 1 (Thread 0x7e (LWP 5) \"bs\"):");
    board.line(0, rank == 1 ? "#0  0x01 in __sleep () from libc.so.6" : "#0  0x01 in PMPI_Barrier () from libmpi.so");
    board.line(0, "#1  0x02 in main () at bs.c:9");
  }
  board.line(1, "ddl: MPI rank 3 (pid 103) on g:");
  board.line(1, "Thread 1 (Thread 0x7e (LWP 5) \"bs\"):");
  board.line(1, "#0  0x01 in PMPI_Barrier () from libmpi.so");
  board.line(1, "#1  0x02 in main () at bs.c:9");
  CHECK(board.evidence(1).front() == "ddl: MPI rank 1 (pid 101) on h:");
  CHECK(board.gang_has_evidence() == std::vector<bool>{true, true});
  std::vector<RankLaunch> launches(2);
  launches[0].host.name = "h";
  launches[1].host.name = "g";
  Hang hang{false, {0, 1, 2, 3}, milliseconds(2000)};
  CHECK(hang_report(hang, board, launches, {}).starts_with("ddl: error: stalled ranks: 0-3\n"
                                                          "ddl: suspect: rank 1 on h: in __sleep < main\n"
                                                          "ddl: ranks 0,2-3: in PMPI_Barrier < main\n"
                                                          "ddl: rank 0 on h: last line: (none)\n"
                                                          "ddl: rank 1 on h: last line: rank 1 up\n"));
}

TEST_CASE("rendezvous: an authenticated HEARTBEAT reaches on_heartbeat and joins nobody", "[watchdog][rendezvous]") {
  using namespace ddl::rendezvous;
  using namespace ddl::rendezvous::testing;
  std::atomic<int> seen{-1};
  ServerOptions options = test_options(2);
  options.on_heartbeat = [&](int rank) { seen = rank; };
  Server server;
  auto endpoint = server.start(options);
  REQUIRE(endpoint);
  REQUIRE(send_heartbeat(join_info(*endpoint, 1, 2), Millis(3000)));
  CHECK(seen == 1);
  CHECK(server.missing_ranks() == std::vector<int>{0, 1});
  CHECK_FALSE(server.first_join());
  auto wrong = join_info(*endpoint, 0, 2);
  wrong.token = std::string(64, '0');
  auto refused = send_heartbeat(wrong, Millis(3000));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("authentication failed") != std::string::npos);
  CHECK(seen == 1);
}
