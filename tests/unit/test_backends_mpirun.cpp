// SPDX-License-Identifier: MIT
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <map>
#include <mutex>

#include <catch2/catch.hpp>

#include "backends/mpirun/mpirun_backend.hpp"
#include "backends/mpirun/mpirun_command.hpp"
#include "backends/mpirun/mpirun_output.hpp"

using namespace ddl;
using namespace ddl::mpirun;

namespace {

class Recorder final : public RankEvents {
public:
  void started(int, long) override {}
  void output(int rank, Stream stream, std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    (stream == Stream::out ? out_ : err_)[rank].append(bytes);
  }
  void exited(int rank, const RankExit& how) override {
    std::lock_guard lock(mutex_);
    order_.push_back(rank);
    exits_[rank] = how;
    changed_.notify_all();
  }
  bool wait_exits(std::size_t count, std::chrono::seconds limit) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return exits_.size() >= count; });
  }
  std::string out(int rank) { std::lock_guard lock(mutex_); return out_[rank]; }
  std::string err(int rank) { std::lock_guard lock(mutex_); return err_[rank]; }
  RankExit exit(int rank) { std::lock_guard lock(mutex_); return exits_[rank]; }
  int first() { std::lock_guard lock(mutex_); return order_.front(); }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, std::string> out_, err_;
  std::map<int, RankExit> exits_;
  std::vector<int> order_;
};

Plan local_plan(int ranks) {
  Plan plan;
  plan.world_size = ranks;
  plan.hosts.push_back(Host{"localhost", "127.0.0.1", ranks, {}, "local"});
  for (int r = 0; r < ranks; ++r) {
    RankSlot slot;
    slot.rank = r;
    slot.local_rank = r;
    slot.local_size = ranks;
    plan.ranks.push_back(slot);
  }
  return plan;
}

MpirunOptions ssh_options() {
  MpirunOptions options;
  options.rsh_transport = HostTransport::ssh;
  return options;
}

RankLaunch launch_of(int rank, std::vector<std::string> argv) {
  RankLaunch launch;
  launch.rank = rank;
  launch.host = Host{"localhost", "127.0.0.1", 1, {}, "local"};
  launch.argv = std::move(argv);
  launch.env = {{"DDL_RANK", std::to_string(rank)},
                {"DDL_TOKEN", "s3cret"},
                {"ODD", rank == 0 ? "a 'b' $c\nd" : "plain"}};
  return launch;
}

} // namespace

TEST_CASE("mpirun command line: common env by name, per-rank env in blobs", "[mpirun]") {
  MpirunSettings settings;
  settings.hostfile = "/tmp/x/hostfile";
  settings.ddl_path = "/usr/bin/ddl";
  settings.as_root = true;
  settings.rsh_transport = "ssh";
  std::vector<RankLaunch> launches{launch_of(0, {"app", "--flag"}), launch_of(1, {"app", "--flag"})};
  auto command = build_mpirun_command(launches, settings);
  REQUIRE(command.has_value());
  const auto& argv = command->argv;
  std::vector<std::string> head(argv.begin(), argv.begin() + 21);
  CHECK(head == std::vector<std::string>{"mpirun", "--hostfile", "/tmp/x/hostfile", "-np", "2",
                                         "--tag-output", "--allow-run-as-root", "--stdin", "none", "--mca",
                                         "plm_rsh_agent", "/usr/bin/ddl rsh", "--mca", "plm_rsh_no_tree_spawn", "1",
                                         "--mca", "orte_leave_session_attached", "1",
                                         "-x", "DDL_TOKEN", "-x"});
  CHECK(argv[21] == "DDL_MPI_ENV_0");
  CHECK(argv.back() == "--flag");
  for (const auto& word : argv) {
    CHECK(word.find("s3cret") == std::string::npos);
  }
  CHECK(command->env[0] == std::pair<std::string, std::string>{"DDL_TOKEN", "s3cret"});
  CHECK(command->env[1].second == "export DDL_RANK='0'\nexport ODD='a '\\''b'\\'' $c\nd'\n");
}

TEST_CASE("Tagged mpirun output goes back to each rank", "[mpirun]") {
  std::map<int, std::string> got;
  TaggedOutput output([&](int rank, Stream stream, std::string_view bytes) {
    got[rank * 10 + (stream == Stream::err ? 1 : 0)].append(bytes);
  });
  output.feed(Stream::out, "[1,0]<stdout>:hello\n[1,1]<std");
  output.feed(Stream::out, "out>:wor");
  output.feed(Stream::out, "[1,1]<stdout>:ld [x] ok\n");
  output.feed(Stream::err, "[1,1]<stderr>:boom\n[1,1]<stderr>:ddl-mpi: rank 1 exit 3\n");
  output.feed(Stream::err, "-----\nPrimary job terminated\n");
  output.finish();
  CHECK(got[0] == "hello\n");
  CHECK(got[10] == "world [x] ok\n");
  CHECK(got[11] == "boom\n");
  REQUIRE(output.first_failure().has_value());
  CHECK(*output.first_failure() == std::pair{1, 3});
  CHECK(output.launcher_text() == "-----\nPrimary job terminated\n");
  CHECK(signalled_rank("mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).") ==
        std::pair{1, 9});
}

TEST_CASE("mpirun runs the gang locally; env, output and the failing rank pass through", "[mpirun]") {
  MpirunBackend backend(ssh_options());
  REQUIRE(backend.prepare(local_plan(2), {}).has_value());
  Recorder events;
  const char* script = "printf '%s|%s|%s|%s\\n' \"$DDL_RANK\" \"$OMPI_COMM_WORLD_RANK\" \"$ODD\" \"$DDL_TOKEN\";"
                       " [ \"$DDL_RANK\" = 1 ] && { echo bad >&2; exit 7; }; sleep 0.3";
  std::vector<RankLaunch> gang{launch_of(0, {"sh", "-c", script}), launch_of(1, {"sh", "-c", script})};
  REQUIRE(backend.start(gang, events).started == 2);
  REQUIRE(events.wait_exits(2, std::chrono::seconds(60)));
  CHECK(events.out(0) == "0|0|a 'b' $c\nd|s3cret\n");
  CHECK(events.out(1) == "1|1|plain|s3cret\n");
  CHECK(events.err(1) == "bad\n");
  CHECK(events.first() == 1);
  CHECK(events.exit(1).code == 7);
  backend.shutdown();
}

TEST_CASE("mpirun: a rank killed by a signal is reported as such", "[mpirun]") {
  MpirunBackend backend(ssh_options());
  REQUIRE(backend.prepare(local_plan(2), {}).has_value());
  Recorder events;
  const char* script = "[ \"$DDL_RANK\" = 0 ] && kill -9 $$; sleep 5";
  std::vector<RankLaunch> gang{launch_of(0, {"sh", "-c", script}), launch_of(1, {"sh", "-c", script})};
  REQUIRE(backend.start(gang, events).started == 2);
  REQUIRE(events.wait_exits(2, std::chrono::seconds(60)));
  CHECK(events.first() == 0);
  CHECK(events.exit(0).code == 128 + SIGKILL);
  backend.shutdown();
}

TEST_CASE("MPICH's Hydra: its own spellings, names in -genvlist, PMI_RANK in the rank script", "[mpirun]") {
  MpirunSettings settings;
  settings.mpirun = "mpiexec.hydra";
  settings.flavour = MpiFlavour::mpich;
  settings.hostfile = "/tmp/x/hostfile";
  settings.rsh_exec = "/tmp/x/rsh";
  settings.workdir = "/work dir";
  settings.as_root = true;
  settings.extra_args = {"-bind-to", "core"};
  std::vector<RankLaunch> launches{launch_of(0, {"app"}), launch_of(1, {"app"})};
  launches[0].env.emplace_back("PMI_RANK", "0");  // ddl's mpi framework: Hydra sets its own
  launches[1].env.emplace_back("PMI_RANK", "1");
  auto command = build_mpirun_command(launches, settings);
  REQUIRE(command.has_value());
  const auto& argv = command->argv;
  std::vector<std::string> head(argv.begin(), argv.begin() + 18);
  CHECK(head == std::vector<std::string>{"mpiexec.hydra", "-f", "/tmp/x/hostfile", "-n", "2", "-prepend-rank",
                                         "-launcher", "rsh", "-launcher-exec", "/tmp/x/rsh", "-wdir", "/work dir",
                                         "-bind-to", "core", "-genvlist",
                                         "DDL_TOKEN,DDL_MPI_ENV_0,DDL_MPI_ENV_1", "sh", "-c"});
  CHECK(argv[18].starts_with("case ${PMI_RANK:-} in"));
  CHECK(argv.back() == "app");
  CHECK(std::ranges::find(argv, "--allow-run-as-root") == argv.end());
  for (const auto& word : argv) {
    CHECK(word.find("s3cret") == std::string::npos);
  }
  CHECK(command->env[1].second.find("PMI_RANK") == std::string::npos);
  CHECK(hydra_rsh_script("/opt/my ddl/ddl") == "#!/bin/sh\nexec '/opt/my ddl/ddl' rsh \"$@\"\n");

  // The hosts dial Hydra back at the rendezvous' address, not at the
  // launcher's hostname; a -localhost of the job's own wins.
  settings.launcher_address = "198.18.0.254";
  auto dialled = build_mpirun_command(launches, settings);
  REQUIRE(dialled.has_value());
  CHECK(std::vector<std::string>(dialled->argv.begin() + 10, dialled->argv.begin() + 12) ==
        std::vector<std::string>{"-localhost", "198.18.0.254"});
  settings.extra_args = {"-localhost", "login1"};
  auto own = build_mpirun_command(launches, settings);
  REQUIRE(own.has_value());
  CHECK(std::ranges::count(own->argv, "-localhost") == 1);
  CHECK(std::ranges::find(own->argv, "login1") != own->argv.end());
  CHECK(flavour_of_version("mpirun (Open MPI) 4.1.4\n") == MpiFlavour::openmpi);
  CHECK(flavour_of_version("HYDRA build details:\n    Version: 4.0.2\n") == MpiFlavour::mpich);
  CHECK_FALSE(flavour_of_version("Intel(R) MPI Library").has_value());
}

TEST_CASE("Hydra's -prepend-rank output goes back to each rank, a failure at once", "[mpirun]") {
  std::map<int, std::string> got;
  TaggedOutput output(
      [&](int rank, Stream stream, std::string_view bytes) {
        got[rank * 10 + (stream == Stream::err ? 1 : 0)].append(bytes);
      },
      TagStyle::hydra);
  output.feed(Stream::out, "[1] r=1\n[0] partial[2");
  output.feed(Stream::out, "] more\nstill two [x] [3]x\n");
  output.feed(Stream::err, "[1] boom\n[1] ddl-mpi: rank 1 exit 7\n");
  CHECK(output.take_ended() == std::vector<std::pair<int, int>>{{1, 7}});
  CHECK(output.take_ended().empty());
  output.finish();
  CHECK(got[10] == "r=1\n");
  CHECK(got[0] == "partial");
  CHECK(got[20] == "more\nstill two [x] [3]x\n");
  CHECK(got[11] == "boom\n");
  REQUIRE(output.first_failure().has_value());
  CHECK(*output.first_failure() == std::pair{1, 7});
}

TEST_CASE("mpirun over pods asks its hosts as its rsh agent does: kubectl, never ssh", "[mpirun]") {
  MpirunOptions options;
  options.rsh_transport = HostTransport::kubectl;
  options.kubernetes.kubectl = std::string(DDL_SOURCE_DIR) + "/tests/fakes/kubectl";  // knows no pod here
  MpirunBackend backend(std::move(options));
  // Names that resolve nowhere: an ssh attempt would fail, not reach a host.
  const Inventory pods = {Host{"trainer-1.invalid", "198.18.255.250", 2, {0, 1}, "kubernetes"}};
  auto probed = backend.probe_gpus(pods);
  REQUIRE(probed);
  CHECK(probed->front().slots == 2);
  CHECK(probed->front().gpus == std::vector<int>{0, 1});
  const auto checks = backend.check(pods);
  REQUIRE(checks.size() == 1);
  CHECK_FALSE(checks.front().reachable);
  CHECK(checks.front().error == "Error from server (NotFound): pods \"trainer-1.invalid\" not found");
  CHECK(backend.resolve_addresses(pods).front().address == "198.18.255.250");
  CHECK_FALSE(backend.master_port(pods.front(), 29500, 1).has_value());
}

TEST_CASE("host transports: the word DDL_RSH_TRANSPORT carries to ddl rsh", "[mpirun]") {
  CHECK(transport_word(HostTransport::ssh) == "ssh");
  CHECK(transport_word(HostTransport::kubectl) == "kubernetes");
  CHECK(transport_of_word("kubernetes") == HostTransport::kubectl);
  CHECK(transport_of_word("ssh") == HostTransport::ssh);
  CHECK(transport_of_word("") == HostTransport::ssh);
}
