// SPDX-License-Identifier: MIT
// The job file: every key read into JobSpec, and the defaults.
#include <catch2/catch.hpp>

#include "src/job/job.hpp"

using namespace std::chrono_literals;

namespace {

// The host list as text, one spec per host (format_host_spec).
std::vector<std::string> list_text(const std::vector<ddl::HostSpec>& list) {
  std::vector<std::string> out;
  for (const auto& spec : list) out.push_back(ddl::format_host_spec(spec));
  return out;
}

ddl::JobSpec parse(std::string_view text, const std::string& origin = "job.toml") {
  auto job = ddl::parse_job(text, origin, {});
  INFO((job ? std::string() : job.error().message));
  REQUIRE(job.has_value());
  return *job;
}

} // namespace

TEST_CASE("an empty job file gives the documented defaults", "[job]") {
  ddl::JobSpec job = parse("");
  CHECK(job.source == "job.toml");
  CHECK(job.name == "job");
  CHECK(job.command.empty());
  CHECK_FALSE(job.command_is_shell);
  CHECK(job.workdir.empty());
  CHECK(job.env.empty());
  CHECK(job.env_pass.empty());
  CHECK(job.frameworks == std::vector<ddl::Framework>{ddl::Framework::torch});
  CHECK_FALSE(job.timeout.has_value());
  CHECK(job.max_restarts == 0);
  CHECK(job.grace == 10s);
  CHECK(job.log_dir.empty());
  CHECK(job.hosts.list.empty());
  CHECK(job.hosts.hostfile.empty());
  CHECK(job.hosts.slurm == ddl::SlurmHosts::automatic);
  CHECK(job.hosts.discovery_script.empty());
  CHECK(job.hosts.discovery_timeout == 60s);
  CHECK_FALSE(job.hosts.slots.has_value());
  CHECK_FALSE(job.hosts.slots_from_gpus);
  CHECK(job.launch.backend == ddl::BackendKind::automatic);
  CHECK_FALSE(job.launch.np.max.has_value());
  CHECK(job.launch.bind_gpus);
  CHECK(job.ssh.user.empty());
  CHECK_FALSE(job.ssh.port.has_value());
  CHECK(job.ssh.config == "~/.ssh/config");
  CHECK(job.ssh.known_hosts == "~/.ssh/known_hosts");
  CHECK(job.ssh.host_key_check == ddl::HostKeyCheck::yes);
  CHECK(job.ssh.connect_timeout == 10s);
  CHECK(job.ssh.fanout == 64);
  CHECK(job.kubernetes.namespace_ == "default");
  CHECK(job.kubernetes.kubectl == "kubectl");
  CHECK(job.rendezvous.address == "auto");
  CHECK(job.rendezvous.port == 0);
  CHECK(job.rendezvous.timeout == 5min);
  CHECK(job.torch.master_port == 0);
  CHECK(job.tensorflow.chief == 1);
  CHECK(job.tensorflow.ps == 0);
  CHECK(job.tensorflow.evaluator == 0);
  CHECK(job.tensorflow.port == 2222);
}

TEST_CASE("the job name defaults to the file stem, else ddl", "[job]") {
  CHECK(parse("", "configs/resnet.toml").name == "resnet");
  CHECK(parse("", "").name == "ddl");
  auto job = ddl::load_job("", {});
  REQUIRE(job);
  CHECK(job->name == "ddl");
  CHECK(job->source.empty());
}

TEST_CASE("every key of the design's job file is read", "[job]") {
  ddl::JobSpec job = parse(R"(
[job]
name = "resnet"
command = ["python3", "train.py", "--lr", "0.1"]
workdir = "/shared/resnet"
env = { NCCL_DEBUG = "WARN", OMP_NUM_THREADS = 4, A_FLAG = true }
env_pass = ["PYTHONPATH", "NCCL_*"]
frameworks = ["torch", "tensorflow", "horovod", "jax", "mpi", "torch"]
timeout = "2h"
max_restarts = 3
grace = "1.5s"
log_dir = "logs"

[hosts]
list = ["node[01-04]:8", "gpu-a:4"]
slots = 2
discovery_timeout = "5s"

[launch]
backend = "ssh"
np = 16
bind_gpus = false

[ssh]
user = "ml"
port = 2200
identity = "~/.ssh/id_ed25519"
config = "none"
known_hosts = "/tmp/kh"
host_key_check = "accept-new"
connect_timeout = "3s"
fanout = 8
remote_ddl = "/opt/ddl/bin/ddl"

[kubernetes]
namespace = "ml"
selector = "app=trainer"
container = "trainer"
kubectl = "/usr/bin/kubectl"
context = "prod"

[rendezvous]
address = "10.0.0.1"
port = 29400
timeout = "1m"

[torch]
master_port = 0

[tensorflow]
chief = 0
ps = 2
evaluator = 1
port = 3000
)");
  CHECK(job.name == "resnet");
  CHECK(job.command == std::vector<std::string>{"python3", "train.py", "--lr", "0.1"});
  CHECK_FALSE(job.command_is_shell);
  CHECK(job.workdir == "/shared/resnet");
  // The file's order, not toml++'s sorted order; integers and booleans as text.
  CHECK(job.env == ddl::EnvList{{"NCCL_DEBUG", "WARN"}, {"OMP_NUM_THREADS", "4"},
                                {"A_FLAG", "true"}});
  CHECK(job.env_pass == std::vector<std::string>{"PYTHONPATH", "NCCL_*"});
  CHECK(job.frameworks == std::vector<ddl::Framework>{ddl::Framework::torch,
                                                      ddl::Framework::tensorflow,
                                                      ddl::Framework::horovod, ddl::Framework::jax,
                                                      ddl::Framework::mpi});
  CHECK(job.timeout == 2h);
  CHECK(job.max_restarts == 3);
  CHECK(job.grace == 1500ms);
  CHECK(job.log_dir == "logs");
  CHECK(list_text(job.hosts.list) ==
        std::vector<std::string>{"node01:8", "node02:8", "node03:8", "node04:8", "gpu-a:4"});
  CHECK(job.hosts.slots == 2);
  CHECK(job.hosts.discovery_timeout == 5s);
  CHECK(job.launch.backend == ddl::BackendKind::ssh);
  CHECK(job.launch.np.max == 16);
  CHECK_FALSE(job.launch.bind_gpus);
  CHECK(job.ssh.user == "ml");
  CHECK(job.ssh.port == 2200);
  CHECK(job.ssh.identity == "~/.ssh/id_ed25519");
  CHECK(job.ssh.config == "none");
  CHECK(job.ssh.known_hosts == "/tmp/kh");
  CHECK(job.ssh.host_key_check == ddl::HostKeyCheck::accept_new);
  CHECK(job.ssh.connect_timeout == 3s);
  CHECK(job.ssh.fanout == 8);
  CHECK(job.ssh.remote_ddl == "/opt/ddl/bin/ddl");
  CHECK(job.kubernetes.namespace_ == "ml");
  CHECK(job.kubernetes.selector == "app=trainer");
  CHECK(job.kubernetes.container == "trainer");
  CHECK(job.kubernetes.kubectl == "/usr/bin/kubectl");
  CHECK(job.kubernetes.context == "prod");
  CHECK(job.rendezvous.address == "10.0.0.1");
  CHECK(job.rendezvous.port == 29400);
  CHECK(job.rendezvous.timeout == 1min);
  CHECK(job.torch.master_port == 0);
  CHECK(job.tensorflow.chief == 0);
  CHECK(job.tensorflow.ps == 2);
  CHECK(job.tensorflow.evaluator == 1);
  CHECK(job.tensorflow.port == 3000);
}

TEST_CASE("[mpirun] args and flavour", "[job]") {
  ddl::JobSpec job = parse("[mpirun]\nargs = [\"--mca\", \"btl\", \"self,tcp\"]\nflavour = \"mpich\"\n");
  CHECK(job.mpirun.args == std::vector<std::string>{"--mca", "btl", "self,tcp"});
  CHECK(job.mpirun.flavour == ddl::MpiFlavour::mpich);
  CHECK(parse("").mpirun.flavour == ddl::MpiFlavour::automatic);
}

TEST_CASE("a command string runs through /bin/sh -c", "[job]") {
  ddl::JobSpec job = parse("[job]\ncommand = \"python3 train.py | tee log\"\n");
  CHECK(job.command == std::vector<std::string>{"python3 train.py | tee log"});
  CHECK(job.command_is_shell);
}

TEST_CASE("env may be a [job.env] table and frameworks may be empty", "[job]") {
  ddl::JobSpec job = parse("[job]\nframeworks = []\n[job.env]\nB = \"2\"\nA = \"1\"\n");
  CHECK(job.env == ddl::EnvList{{"B", "2"}, {"A", "1"}});
  CHECK(job.frameworks.empty());
}

TEST_CASE("hosts sources: list as one string, slurm, slots = gpus", "[job]") {
  CHECK(list_text(parse("[hosts]\nlist = \"a:2,b\"\n").hosts.list) == std::vector<std::string>{"a:2", "b"});
  CHECK(parse("[hosts]\nslurm = true\n").hosts.slurm == ddl::SlurmHosts::on);
  CHECK(parse("[hosts]\nslurm = false\n").hosts.slurm == ddl::SlurmHosts::off);
  ddl::JobSpec gpus = parse("[hosts]\nslots = \"gpus\"\n");
  CHECK(gpus.hosts.slots_from_gpus);
  CHECK_FALSE(gpus.hosts.slots.has_value());
  // slurm = false is no source, so it does not conflict with a list.
  CHECK(parse("[hosts]\nslurm = false\nlist = [\"a\"]\n").hosts.list.size() == 1);
}

TEST_CASE("a UTF-8 byte order mark is accepted", "[job]") {
  CHECK(parse("\xEF\xBB\xBF[job]\nname = \"bom\"\n").name == "bom");
}

TEST_CASE("require_command", "[job]") {
  ddl::JobSpec job;
  auto missing = ddl::require_command(job);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ddl::ExitCode::usage);
  CHECK(missing.error().message == "no command: give one in [job] command, or after the options: ddl run [JOB] [options] PROGRAM [args]");
  job.command = {"true"};
  CHECK(ddl::require_command(job));
}

TEST_CASE("[preflight]: off when absent; its keys and defaults (issue 43)", "[job]") {
  ddl::JobSpec none = parse("");
  CHECK_FALSE(none.preflight.enabled);
  CHECK(ddl::preflight_on_fail(none.preflight, true) == ddl::PreflightOnFail::exclude);
  CHECK(ddl::preflight_on_fail(none.preflight, false) == ddl::PreflightOnFail::stop);

  // DESIGN.md: enabled = false by default (true = --preflight), budget 5s.
  ddl::JobSpec empty = parse("[preflight]\n");
  CHECK_FALSE(empty.preflight.enabled);
  CHECK(empty.preflight.in_file);
  CHECK(empty.preflight.network);
  CHECK(empty.preflight.min_fraction == 0.5);
  CHECK(empty.preflight.budget == 5s);

  ddl::JobSpec set = parse("[preflight]\nenabled = true\nnetwork = false\nmin_fraction = 0.3\n"
                           "max_latency_factor = 8\nbudget = \"2s\"\non_fail = \"warn\"\n");
  CHECK(set.preflight.enabled);
  CHECK(set.preflight.enabled_said);
  CHECK_FALSE(set.preflight.network);
  CHECK(set.preflight.min_fraction == 0.3);
  CHECK(set.preflight.max_latency_factor == 8.0);
  CHECK(set.preflight.budget == 2s);
  CHECK(ddl::preflight_on_fail(set.preflight, true) == ddl::PreflightOnFail::warn);
}

TEST_CASE("[preflight]: --preflight and --no-preflight over enabled (issue 43)", "[job]") {
  ddl::Overrides on;
  on.preflight = true;
  ddl::Overrides off;
  off.no_preflight = true;
  CHECK(ddl::parse_job("[job]\ncommand = [\"true\"]\n", "job.toml", on)->preflight.enabled);
  CHECK_FALSE(ddl::parse_job("[preflight]\nenabled = true\n", "job.toml", off)->preflight.enabled);
  ddl::Overrides both = on;
  both.no_preflight = true;
  auto refused = ddl::parse_job("", "job.toml", both);
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.error().message, Catch::Contains("--preflight and --no-preflight: give one"));
}

TEST_CASE("[preflight]: wrong values are reported with the key (issue 43)", "[job]") {
  auto bad = [](std::string_view text) {
    auto job = ddl::parse_job(text, "job.toml", {});
    REQUIRE_FALSE(job.has_value());
    return job.error().message;
  };
  CHECK_THAT(bad("[preflight]\nmin_fraction = 1.5\n"),
             Catch::Contains("preflight.min_fraction: must be above 0 and at most 1"));
  CHECK_THAT(bad("[preflight]\nmax_latency_factor = 0.5\n"),
             Catch::Contains("preflight.max_latency_factor: must be at least 1"));
  CHECK_THAT(bad("[preflight]\non_fail = \"skip\"\n"), Catch::Contains("preflight.on_fail: 'skip' is not one of"));
  CHECK_THAT(bad("[preflight]\nspeed = 1\n"), Catch::Contains("speed"));
  CHECK_THAT(bad("[preflight]\nbudget = \"100ms\"\n"),
             Catch::Contains("preflight.budget: must be at least 1s (the check launches on every host)"));
}
