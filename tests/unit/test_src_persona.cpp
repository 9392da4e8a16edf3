// SPDX-License-Identifier: MIT
// The personalities (src/persona): a peer's command line read into ddl's job,
// the job edits applied to a loaded job, and the plan-time rules.
#include <catch2/catch.hpp>

#include <map>

#include "src/inventory/inventory.hpp"
#include "src/persona/deepspeed.hpp"
#include "src/persona/horovodrun.hpp"
#include "src/persona/mpirun.hpp"
#include "src/persona/registry.hpp"
#include "src/persona/torchrun.hpp"
#include "src/plan/plan.hpp"
#include "src/util/env_file.hpp"
#include "tests/unit/plan_fixtures.hpp"

using namespace ddl;
using namespace ddl::persona;

namespace {

// A machine with these variables and files, 8 CPUs and `gpus` GPUs.
struct FakeMachine {
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> files;
  int gpus = 0;

  Machine machine() const {
    Machine m;
    m.getenv = [this](const char* name) -> const char* {
      auto found = env.find(name);
      return found == env.end() ? nullptr : found->second.c_str();
    };
    m.is_file = [this](const std::string& path) { return files.contains(path); };
    m.cwd = "/work/here";
    m.home = "/home/me";
    m.cpus = 8;
    m.gpus = [n = gpus] { return n; };
    m.env_file = [this](const std::string& path) -> Result<EnvList> { return parse_env_file(files.at(path), path); };
    return m;
  }
};

// The job a launch describes: loaded from its overrides (no job file), then edited.
JobSpec job_of(const Launch& launch) {
  auto job = load_job("", launch.overrides);
  REQUIRE(job);
  for (const JobEdit& edit : launch.job_edits) {
    edit(*job);
  }
  return *job;
}

// The plan-time rules on `hosts`: "" when all pass, else the first error.
std::string plan_problem(const Launch& launch, JobSpec& job, const Inventory& hosts, bool here = true) {
  auto plan = make_plan(job, hosts);
  REQUIRE(plan);
  for (const PlanEdit& edit : launch.plan_edits) {
    if (auto done = edit(job, PlanView{*plan, here}); !done) {
      return done.error().message;
    }
  }
  return "";
}

std::string error_of(const Result<Launch>& launch) {
  REQUIRE_FALSE(launch);
  CHECK(launch.error().code == ExitCode::usage);
  return launch.error().message;
}

} // namespace

TEST_CASE("split_words", "[persona]") {
  const std::vector<Option> table = {{{"--np", "-n"}, Arity::value, "N", "", 1},
                                     {{"--mca"}, Arity::two_values, "K V", "", 2},
                                     {{"--flag"}, Arity::flag, "", "", 3}};
  SECTION("options, then the program with its own options") {
    auto words = split_words(table, {"--np=2", "--mca", "btl", "tcp", "-n", "3", "prog", "--np", "9"}, "x",
                             Dashes::double_only);
    REQUIRE(words);
    REQUIRE(words->options.size() == 3);
    CHECK(words->options[0].values == std::vector<std::string>{"2"});
    CHECK(words->options[1].values == std::vector<std::string>{"btl", "tcp"});
    CHECK(words->options[2].value() == "3");
    CHECK(words->program == std::vector<std::string>{"prog", "--np", "9"});
  }
  SECTION("Open MPI's single-dash long options") {
    auto words = split_words(table, {"-mca", "a", "b", "-flag", "p"}, "mpirun", Dashes::single_too);
    REQUIRE(words);
    CHECK(words->options.size() == 2);
    CHECK(words->program == std::vector<std::string>{"p"});
  }
  SECTION("-- ends the options") {
    auto words = split_words(table, {"--flag", "--", "--np", "x"}, "x", Dashes::double_only);
    REQUIRE(words);
    CHECK(words->program == std::vector<std::string>{"--np", "x"});
  }
  SECTION("mistakes") {
    CHECK(split_words(table, {"--flg"}, "torchrun", Dashes::double_only).error().message ==
          "unknown option '--flg' for 'ddl torchrun'; did you mean '--flag'?");
    CHECK(split_words(table, {"-u"}, "torchrun", Dashes::double_only).error().message ==
          "unknown option '-u' for 'ddl torchrun'");
    CHECK(split_words(table, {"--np"}, "x", Dashes::double_only).error().message == "--np: needs a value (N)");
    CHECK(split_words(table, {"--flag=1"}, "x", Dashes::double_only).error().message ==
          "--flag: takes no value (got '1')");
  }
}

TEST_CASE("read_torchrun", "[persona]") {
  FakeMachine fake;
  const Machine machine = fake.machine();
  SECTION("torch's documented single-node line") {
    auto launch = read_torchrun({"--standalone", "--nnodes=1", "--nproc-per-node=4", "train.py", "--lr", "0.1"},
                                machine);
    REQUIRE(launch);
    JobSpec job = job_of(*launch);
    CHECK(job.command == std::vector<std::string>{"python3", "-u", "train.py", "--lr", "0.1"});
    CHECK(job.hosts.slots_each == 4);
    CHECK(job.hosts.max_hosts == 1);
    CHECK_FALSE(job.launch.bind_gpus);
    auto hosts = filter_hosts({test::make_host("localhost", 1, {}, "local")}, job.hosts);
    REQUIRE(hosts);
    CHECK(plan_problem(*launch, job, *hosts).empty());
    CHECK(job.env_pass == std::vector<std::string>{"*"});  // the launcher's environment, as torchrun's workers
  }
  SECTION("both spellings, -m, --python and [job] python") {
    auto launch = read_torchrun({"--nproc_per_node", "2", "--python", "/opt/py", "-m", "pkg.train", "a"}, machine);
    REQUIRE(launch);
    CHECK(job_of(*launch).command == std::vector<std::string>{"/opt/py", "-u", "-m", "pkg.train", "a"});
    auto plain = read_torchrun({"--no-python", "./run.sh"}, machine);
    REQUIRE(plain);
    CHECK(job_of(*plain).command == std::vector<std::string>{"./run.sh"});
  }
  SECTION("--nnodes MIN:MAX is ddl's elastic range over hosts") {
    auto launch = read_torchrun({"--nnodes=1:4", "--nproc-per-node=8", "--max-restarts=3", "t.py"}, machine);
    REQUIRE(launch);
    JobSpec job = job_of(*launch);
    CHECK(job.launch.np.min == 8);
    CHECK(job.launch.np.max == 32);
    CHECK(job.hosts.max_hosts == 4);
    CHECK(job.max_restarts == 3);
    CHECK(error_of(read_torchrun({"--nnodes=1:2", "--nproc-per-node=gpu", "t.py"}, machine)) ==
          "--nnodes 1:2: an elastic range needs a number of ranks per node: write --nproc-per-node N");
  }
  SECTION("fewer hosts than --nnodes") {
    auto launch = read_torchrun({"--nnodes=2", "--nproc-per-node=1", "t.py"}, machine);
    REQUIRE(launch);
    JobSpec job = job_of(*launch);
    CHECK(plan_problem(*launch, job, {test::make_host("localhost", 1, {}, "local")}) ==
          "--nnodes 2: the job has 1 host (localhost); ddl starts every node itself, so name them all: "
          "-H node1,node2 or --hostfile FILE");
  }
  SECTION("refused: a node rank, a rendezvous on another host, NUMA binding but node") {
    CHECK(error_of(read_torchrun({"--node-rank=1", "t.py"}, machine)).starts_with(
        "--node-rank 1: ddl starts every node from this one command"));
    CHECK(error_of(read_torchrun({"--numa-binding", "socket", "t.py"}, machine))
              .starts_with("--numa-binding socket: ddl binds a rank to its GPU's NUMA node (node, ddl's --bind gpu)"));
    auto numa = read_torchrun({"--numa-binding", "node", "t.py"}, machine);
    REQUIRE(numa);
    CHECK(numa->overrides.bind == std::optional<std::string>("gpu"));
    CHECK(error_of(read_torchrun({"-r", "3", "t.py"}, machine)).starts_with("-r 3: ddl always shows rank output"));
    CHECK(error_of(read_torchrun({"--tee=3", "t.py"}, machine)) ==
          "--tee 3: ddl writes rank logs to --log-dir: add --log-dir DIR");
    auto launch = read_torchrun({"--rdzv-backend=c10d", "--rdzv-endpoint=elsewhere:29400", "t.py"}, machine);
    REQUIRE(launch);
    JobSpec job = job_of(*launch);
    CHECK(plan_problem(*launch, job, {test::make_host("node-a", 1), test::make_host("node-b", 1)}) ==
          "--rdzv-endpoint elsewhere:29400: ddl puts rank 0 on the job's first host (node-a) and sets MASTER_ADDR "
          "to it, and runs the rendezvous itself on this machine; list elsewhere first in -H (or the hostfile), "
          "or drop --rdzv-endpoint");
    JobSpec again = job_of(*launch);
    CHECK(plan_problem(*launch, again, {test::make_host("elsewhere", 1), test::make_host("node-b", 1)}).empty());
  }
  SECTION("PET_ variables, as torchrun reads them; the command line wins") {
    fake.env = {{"PET_NPROC_PER_NODE", "3"}, {"PET_NODE_RANK", "2"}};
    CHECK(error_of(read_torchrun({"t.py"}, fake.machine())).starts_with("PET_NODE_RANK=2: ddl starts every node"));
    fake.env.erase("PET_NODE_RANK");
    auto launch = read_torchrun({"--nproc-per-node=5", "t.py"}, fake.machine());
    REQUIRE(launch);
    CHECK(job_of(*launch).hosts.slots_each == 5);
  }
  SECTION("--local-ranks-filter shows those local ranks on every host") {
    auto launch = read_torchrun({"--nproc-per-node=2", "--local-ranks-filter=0", "t.py"}, machine);
    REQUIRE(launch);
    JobSpec job = job_of(*launch);
    auto hosts = filter_hosts({test::make_host("a", 1), test::make_host("b", 1)}, job.hosts);
    REQUIRE(hosts);
    CHECK(plan_problem(*launch, job, *hosts).empty());
    CHECK(job.output_ranks.contains(0));
    CHECK_FALSE(job.output_ranks.contains(1));
    CHECK(job.output_ranks.contains(2));
  }
}

TEST_CASE("read_deepspeed", "[persona]") {
  FakeMachine fake;
  fake.files = {{"/work/here/.deepspeed_env", "NCCL_IB_HCA=mlx5_0\n# the cwd wins\nWHO=cwd\n"},
                {"/home/me/.deepspeed_env", "WHO=home\nHOME_ONLY='a b'\n"}};
  SECTION("DeepSpeed's documented line: hostfile, --local_rank, exports") {
    auto launch = read_deepspeed({"--hostfile=myhostfile", "train.py", "--deepspeed"}, fake.machine());
    REQUIRE(launch);
    CHECK(launch->overrides.hostfile == "myhostfile");
    launch->overrides.hostfile.reset();  // no such file here
    JobSpec job = job_of(*launch);
    REQUIRE(job.command.size() == 9);
    CHECK(job.command[0] == "/bin/sh");
    CHECK(job.env == EnvList{{"WHO", "cwd"}, {"HOME_ONLY", "a b"}, {"NCCL_IB_HCA", "mlx5_0"}});
    CHECK(std::vector<std::string>(job.command.begin() + 4, job.command.end()) ==
          std::vector<std::string>{"3", "python3", "-u", "train.py", "--deepspeed"});
    CHECK(job.launch.host_gpus);
    CHECK_FALSE(job.launch.bind_gpus);
    CHECK(std::ranges::find(job.env_pass, "NCCL*") != job.env_pass.end());
  }
  SECTION("the script runs with the python3 of the launcher's PATH, as DeepSpeed runs sys.executable") {
    fake.env["PATH"] = "relative:/no/such:/venv/bin:/usr/bin";
    fake.files["/venv/bin/python3"] = "";
    fake.files["/usr/bin/python3"] = "";
    fake.files["relative/python3"] = "";
    auto launch = read_deepspeed({"--hostfile=h", "train.py"}, fake.machine());
    REQUIRE(launch);
    launch->overrides.hostfile.reset();
    CHECK(job_of(*launch).command.at(5) == "/venv/bin/python3");
    // --python, or a path in [job] python, as given.
    launch = read_deepspeed({"--hostfile=h", "--python", "python3", "train.py"}, fake.machine());
    REQUIRE(launch);
    launch->overrides.hostfile.reset();
    CHECK(job_of(*launch).command.at(5) == "python3");
    fake.env["PATH"] = "/no/such";
    launch = read_deepspeed({"--hostfile=h", "train.py"}, fake.machine());
    REQUIRE(launch);
    launch->overrides.hostfile.reset();
    CHECK(job_of(*launch).command.at(5) == "python3");
  }
  SECTION("--num_gpus and --num_nodes, and not with --include") {
    auto launch = read_deepspeed({"--num_nodes=2", "--num_gpus=2", "t.py"}, fake.machine());
    REQUIRE(launch);
    JobSpec job = job_of(*launch);
    auto hosts = filter_hosts({test::make_host("w0", 8), test::make_host("w1", 8), test::make_host("w2", 8)},
                              job.hosts);
    REQUIRE(hosts);
    CHECK(hosts->size() == 2);
    CHECK(hosts->front().slots == 2);
    CHECK(error_of(read_deepspeed({"--num_gpus=2", "-i", "w0", "t.py"}, fake.machine())) ==
          "Cannot specify num_nodes/gpus with include/exclude");
  }
  SECTION("the launcher and the refused options") {
    auto mpi = read_deepspeed({"--launcher=OpenMPI", "--launcher_args=--mca btl tcp", "t.py"}, fake.machine());
    REQUIRE(mpi);
    JobSpec job = job_of(*mpi);
    CHECK(job.launch.backend == BackendKind::mpirun);
    CHECK(job.mpirun.args == std::vector<std::string>{"--mca", "btl", "tcp"});
    CHECK(error_of(read_deepspeed({"--launcher=mvapich", "t.py"}, fake.machine())).starts_with("--launcher mvapich:"));
    CHECK(error_of(read_deepspeed({"--no_ssh", "t.py"}, fake.machine())).starts_with("--no_ssh: ddl starts every"));
    CHECK(error_of(read_deepspeed({"--venv_script", "a", "t.py"}, fake.machine())).find("--python") !=
          std::string::npos);
  }
  SECTION("one machine without a GPU or hostfile: DeepSpeed's own stop") {
    auto launch = read_deepspeed({"t.py"}, fake.machine());
    REQUIRE(launch);
    JobSpec job = job_of(*launch);
    CHECK(plan_problem(*launch, job, {test::make_host("localhost", 1, {}, "local")}).starts_with(
        "no hostfile and no GPU on this machine"));
  }
}

TEST_CASE("read_horovodrun", "[persona]") {
  FakeMachine fake;
  SECTION("Horovod's documented line, its tuning flags as Horovod's variables") {
    auto launch = read_horovodrun({"-np", "4", "-H", "localhost:4", "--fusion-threshold-mb", "32", "--cycle-time-ms",
                                   "3.5", "--autotune-warmup-samples", "5", "--log-level", "DEBUG",
                                   "--log-without-timestamp", "python", "train.py"},
                                  fake.machine());
    REQUIRE(launch);
    CHECK(launch->overrides.np == "4");
    CHECK(launch->overrides.hosts == std::vector<std::string>{"localhost:4"});
    CHECK(launch->overrides.env == std::vector<std::string>{"HOROVOD_FUSION_THRESHOLD=33554432",
                                                            "HOROVOD_CYCLE_TIME=3.5", "HOROVOD_LOG_LEVEL=DEBUG",
                                                            "HOROVOD_LOG_HIDE_TIME=1"});
    JobSpec job = job_of(*launch);
    CHECK(job.command == std::vector<std::string>{"python", "train.py"});
    // Its whole environment, PATH by name too (kept on other hosts, as horovodrun's `env PATH=...`).
    CHECK(job.env_pass == std::vector<std::string>{"*", "PATH"});
    CHECK(std::ranges::find(job.frameworks, Framework::horovod) != job.frameworks.end());
    CHECK(job.launch.backend == BackendKind::automatic);
  }
  SECTION("--mpi, NICs, the elastic range") {
    auto launch = read_horovodrun({"--mpi", "-np", "8", "--network-interface", "eth1",
                                   "--mpi-args=--map-by ppr:4:node", "python", "t.py"},
                                  fake.machine());
    REQUIRE(launch);
    CHECK(launch->overrides.np == "8");
    JobSpec job = job_of(*launch);
    CHECK(job.launch.backend == BackendKind::mpirun);
    CHECK(job.mpirun.args ==
          std::vector<std::string>{"--map-by", "ppr:4:node", "--mca", "btl_tcp_if_include", "eth1"});
    auto elastic = read_horovodrun({"-np", "8", "--min-np", "4", "--max-np", "12", "python", "t.py"}, fake.machine());
    REQUIRE(elastic);
    CHECK(elastic->overrides.np == "4:12");
    // Elastic Horovod runs on Gloo: not with --mpi.
    for (const char* option : {"--min-np", "--max-np", "--host-discovery-script"}) {
      CHECK(error_of(read_horovodrun({"--mpi", "-np", "4", option, "4", "python", "t.py"}, fake.machine()))
                .starts_with("--mpi: elastic Horovod (--min-np, --max-np, --host-discovery-script) runs on Gloo"));
    }
  }
  SECTION("refused and bad values") {
    CHECK(error_of(read_horovodrun({"--jsrun", "python"}, fake.machine())).starts_with("--jsrun: LSF's jsrun"));
    CHECK(error_of(read_horovodrun({"--autotune-gaussian-process-noise", "2", "python"}, fake.machine())) ==
          "--autotune-gaussian-process-noise 2: must be a number in [0, 1]");
    CHECK(error_of(read_horovodrun({"--gloo", "--mpi", "python"}, fake.machine())) == "--gloo and --mpi: choose one");
  }
}

TEST_CASE("read_mpirun", "[persona]") {
  FakeMachine fake;
  fake.env = {{"MY_VAR", "1"}};
  SECTION("Open MPI's spellings, -x both ways, mpirun's own options to mpirun") {
    auto launch = read_mpirun({"-np", "4", "-host", "a:2,b:2", "-x", "MY_VAR", "-x", "A=b c", "-mca", "btl",
                               "self,tcp", "--bind-to", "core", "-wdir", "/tmp", "./ring_c", "-np", "1"},
                              fake.machine());
    REQUIRE(launch);
    CHECK(launch->overrides.np == "4");
    CHECK(launch->overrides.env == std::vector<std::string>{"A=b c"});
    JobSpec job = job_of(*launch);
    CHECK(job.launch.backend == BackendKind::mpirun);
    CHECK(job.mpirun.args == std::vector<std::string>{"--mca", "btl", "self,tcp", "--bind-to", "core"});
    CHECK(job.workdir == "/tmp");
    CHECK(std::ranges::find(job.env_pass, "MY_VAR") != job.env_pass.end());
    CHECK(job.command == std::vector<std::string>{"./ring_c", "-np", "1"});
  }
  SECTION("--map-by node deals ranks over the hosts in the plan; seq and span are refused") {
    auto node = read_mpirun({"--map-by", "node", "--oversubscribe", "./a"}, fake.machine());
    REQUIRE(node);
    CHECK(job_of(*node).placement.by_node);
    CHECK(job_of(*node).placement.oversubscribe);
    CHECK(job_of(*node).mpirun.args.empty());
    auto rank_by = read_mpirun({"--rank-by", "node", "./a"}, fake.machine());
    REQUIRE(rank_by);
    CHECK(job_of(*rank_by).placement.by_node);
    CHECK(error_of(read_mpirun({"--map-by", "seq", "./a"}, fake.machine())).starts_with("--map-by seq: is not in"));
    auto ppr = read_mpirun({"--map-by", "ppr:2:node", "./a"}, fake.machine());
    REQUIRE(ppr);
    CHECK(job_of(*ppr).hosts.slots_each == 2);
  }
  SECTION("-x of an unset variable warns, as mpirun does") {
    auto launch = read_mpirun({"-x", "NOPE", "./a"}, fake.machine());
    REQUIRE(launch);
    CHECK(launch->warnings.size() == 1);
  }
}

TEST_CASE("personas have a table, a help and a name", "[persona]") {
  for (const Persona& persona : personas()) {
    CHECK(find_persona(persona.name) == &persona);
    const std::string help = persona.help();
    CHECK(help.find("Examples:") != std::string::npos);
    for (const Option& option : persona.options()) {
      CHECK(help.find(std::string(option.names.front())) != std::string::npos);
    }
  }
  CHECK(find_persona("run") == nullptr);
}
