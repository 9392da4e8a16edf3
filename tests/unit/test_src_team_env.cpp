// SPDX-License-Identifier: MIT
// The team's environment (issue 31): the job-file keys and their errors, the
// env layers, host_env patterns, the CPU binding and the topology probe.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstdio>
#include <fstream>

#include <unistd.h>

#include <fmt/core.h>

#include "src/render/binding.hpp"
#include "src/render/launches.hpp"
#include "src/render/team_env.hpp"
#include "src/util/topology.hpp"
#include "tests/unit/plan_fixtures.hpp"

using namespace ddl;

namespace {

std::string errors(std::string_view text, const Overrides& overrides = {}) {
  auto job = parse_job(text, "job.toml", overrides);
  if (job) {
    return "";
  }
  CHECK(job.error().code == ExitCode::usage);
  return job.error().message;
}

JobSpec must_parse(std::string_view text, const Overrides& overrides = {}) {
  auto job = parse_job(text, "job.toml", overrides);
  INFO((job ? std::string() : job.error().message));
  REQUIRE(job);
  return *job;
}

std::string value_of(const EnvList& env, std::string_view name) {
  for (const auto& [key, value] : env) {
    if (key == name) {
      return value;
    }
  }
  return "<unset>";
}

Plan must_plan(const JobSpec& job, const Inventory& inventory) {
  auto plan = make_plan(job, inventory);
  REQUIRE(plan);
  return *plan;
}

// A file under the build's temporary folder, removed at the end.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) : path(std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                                                    "/ddl-unit-env-" + std::to_string(::getpid())) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

// Two NUMA nodes of 4 CPUs, GPU 0 on node 1 and GPU 1 on node 0.
HostTopology two_nodes() {
  return parse_topology("online 0-7\nallowed 0-7\nnode 0 0-3\nnode 1 4-7\ngpu 0 1\ngpu 1 0\n");
}

struct NoOmpThreads {
  NoOmpThreads() { ::unsetenv("OMP_NUM_THREADS"); }
};

} // namespace

TEST_CASE("the team's keys are read", "[job][team_env]") {
  TempFile file("# a comment\nSECRET=\"s p\"\nexport A=1\n");
  JobSpec job = must_parse(fmt::format("[job]\nsetup = \"source ~/venv/bin/activate\"\nenv_file = \"{}\"\n"
                                       "[launch]\nbind = \"numa\"\n"
                                       "[host_env.\"gpu-*\"]\nNCCL_IB_HCA = \"mlx5_0\"\n"
                                       "[host_env.\"rack=r1\"]\nN = 3\n"
                                       "[container]\nimage = \"team/train:1.4\"\nruntime = \"docker\"\n"
                                       "mounts = [\"/data:/data:ro\"]\noptions = [\"--shm-size\", \"8g\"]\n"
                                       "workdir = \"/workspace\"\n",
                                       file.path));
  CHECK(job.setup == "source ~/venv/bin/activate");
  CHECK(job.env_file == file.path);
  CHECK(job.env_file_vars == EnvList{{"SECRET", "s p"}, {"A", "1"}});
  CHECK(job.launch.bind == CpuBind::numa);
  REQUIRE(job.host_env.size() == 2);
  CHECK(job.host_env[0].pattern == "gpu-*");
  CHECK(job.host_env[1].env == EnvList{{"N", "3"}});
  CHECK(job.container.image == "team/train:1.4");
  CHECK(job.container.runtime == ContainerRuntime::docker);
  CHECK(job.container.mounts == std::vector<std::string>{"/data:/data:ro"});
  CHECK(job.container.options == std::vector<std::string>{"--shm-size", "8g"});
  CHECK(job.container.workdir == "/workspace");
  CHECK(label_need(job) == LabelNeed::required);  // "rack=r1" reads the hosts' labels
}

TEST_CASE("overrides: --bind and --env-file replace the job file's keys", "[job][team_env]") {
  TempFile file("B=2\n");
  Overrides o;
  o.bind = "core";
  o.env_file = file.path;
  JobSpec job = must_parse("[job]\nenv_file = \"missing-is-not-read\"\n[launch]\nbind = \"gpu\"\n", o);
  CHECK(job.launch.bind == CpuBind::core);
  CHECK(job.env_file_vars == EnvList{{"B", "2"}});
  o.bind = "sockets";
  o.env_file = "/nonexistent/.env";
  CHECK(errors("", o) == "--bind: 'sockets' is not one of none, core, numa, gpu\n"
                         "--env-file: /nonexistent/.env: cannot read env file: No such file or directory");
}

TEST_CASE("the team's keys: every error with its place", "[job][team_env][errors]") {
  CHECK(errors("[launch]\nbind = \"cores\"\n") ==
        "job.toml:2:8: launch.bind: 'cores' is not one of none, core, numa, gpu; did you mean 'core'?");
  CHECK(errors("[job]\nsetup = 1\n") == "job.toml:2:9: job.setup: expected a string, got an integer");
  CHECK(errors("[job]\nenv_file = \"\"\n") == "job.toml:2:12: job.env_file: must not be empty");
  CHECK(errors("[job]\nenv_file = \"/nonexistent/.env\"\n") ==
        "job.toml:2:12: job.env_file: /nonexistent/.env: cannot read env file: No such file or directory");
  TempFile bad("OK=1\nnot an assignment\n");
  CHECK(errors(fmt::format("[job]\nenv_file = \"{}\"\n", bad.path)) ==
        fmt::format("job.toml:2:12: job.env_file: {}:2: not NAME=VALUE (no '='; the line is not shown: it may "
                    "hold a secret)", bad.path));
  CHECK(errors("[host_env.\"a*\"]\n1X = \"v\"\nY = 1.5\n") ==
        "job.toml:2:1: host_env.\"a*\": '1X' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)\n"
        "job.toml:3:5: host_env.\"a*\".Y: expected a string, got a floating-point number");
  CHECK(errors("[host_env]\nX = \"v\"\n") ==
        "job.toml:2:5: host_env.\"X\": expected a table of NAME = \"value\", got a string");
  CHECK(errors("[host_env.\"=r1\"]\nX = \"v\"\n") == "job.toml:1:11: host_env: '=r1' has no label name before '='");
  CHECK(errors("host_env = 3\n") == "job.toml:1:12: host_env: expected a table, got an integer");
  CHECK(errors("[container]\nruntime = \"podman\"\n") ==
        "job.toml:1:1: container.image: the image every rank runs in must be given, e.g. image = \"team/train:1.4\"");
  CHECK(errors("[container]\nimage = \"i\"\nruntime = \"podmn\"\n") ==
        "job.toml:3:11: container.runtime: 'podmn' is not one of podman, docker, apptainer; did you mean "
        "'podman'? (or an array: the command, with {image})");
  CHECK(errors("[container]\nimage = \"i\"\nruntime = [\"enroot\", \"start\"]\n") ==
        "job.toml:3:11: container.runtime: a runtime template must hold {image}, e.g. "
        "[\"enroot\", \"start\", \"{image}\"]");
  CHECK(errors("[container]\nimage = \"i\"\nruntime = [\"x\", \"{image}\", \"{imag}\"]\nmounts = []\n") ==
        "job.toml:3:28: container.runtime[2]: '{imag}' is not one of {image}, {name}, {workdir}, {gpus}, {command}\n"
        "job.toml:4:10: container.mounts: not with a runtime template (runtime = [...]); put these words in the "
        "template");
  CHECK(errors("[container]\nimage = \"i\"\nmounts = [\"/data\", \"/a:rel\", 3]\nworkdir = \"w\"\n") ==
        "job.toml:3:11: container.mounts[0]: '/data' is not SOURCE:TARGET[:OPTIONS]\n"
        "job.toml:3:20: container.mounts[1]: '/a:rel': the target must be an absolute path in the container\n"
        "job.toml:3:30: container.mounts[2]: expected a string, got an integer\n"
        "job.toml:4:11: container.workdir: must be an absolute path in the container");
  // A runtime would read an option-like image as an option (issue 40, item 7).
  CHECK(errors("[container]\nimage = \"--privileged\"\n") ==
        "job.toml:2:9: container.image: '--privileged' starts with '-' (a runtime would read it as an option); "
        "name an image, e.g. image = \"team/train:1.4\"");
  // {command} inside a word was left as text: the program never ran, exit 0 (issue 40, item 6).
  CHECK(errors("[container]\nimage = \"i\"\nruntime = [\"sh\", \"-c\", \"echo wrapped: {command}\", \"{image}\"]\n") ==
        "job.toml:3:24: container.runtime[2]: 'echo wrapped: {command}': {command} must be a word of its own (the "
        "program's words go there, one for one); to run them from a shell, write \"sh\", \"-c\", \"...; exec "
        "\\\"$@\\\"\", \"sh\", \"{command}\"");
  CHECK(errors("[container]\nimage = \"i\"\nimag = \"j\"\n") ==
        "job.toml:3:1: unknown key 'imag' in [container]; did you mean 'image'?");
}

TEST_CASE("a rank's env: [job] env, then the env file, then host_env, then -x", "[render][team_env]") {
  JobSpec job = test::all_frameworks_job();
  job.env = {{"A", "job"}, {"B", "job"}, {"C", "job"}, {"D", "job"}};
  job.env_file = ".env";
  job.env_file_vars = {{"B", "file"}, {"C", "file"}, {"D", "file"}};
  job.host_env = {{"node-*", {{"C", "host"}, {"D", "host"}}}, {"node-b", {{"C", "b"}}}};
  job.env_cli = {{"D", "cli"}};
  Plan plan = must_plan(job, test::two_by_two());
  const EnvList a = rank_env(job, plan, 0, LaunchContext{});
  const EnvList b = rank_env(job, plan, 2, LaunchContext{});
  CHECK(value_of(a, "A") == "job");
  CHECK(value_of(a, "B") == "file");
  CHECK(value_of(a, "C") == "host");
  CHECK(value_of(b, "C") == "b");  // a later table wins
  CHECK(value_of(a, "D") == "cli");
  CHECK(shown_env_value(job, "B", "file") == "<from .env>");
  CHECK(shown_env_value(job, "C", "host") == "host");
}

TEST_CASE("host_env patterns: globs on names, label=value", "[render][team_env]") {
  Host host = test::make_host("gpu-a7", 1);
  host.labels = {{"rack", "r12"}};
  CHECK(host_env_matches("gpu-a*", host));
  CHECK(host_env_matches("gpu-a[0-9]", host));
  CHECK(host_env_matches("gpu-?7", host));
  CHECK_FALSE(host_env_matches("gpu-b*", host));
  CHECK(host_env_matches("rack=r1*", host));
  CHECK(host_env_matches("rack=r12", host));
  CHECK_FALSE(host_env_matches("rack=r1", host));
  CHECK_FALSE(host_env_matches("zone=r12", host));
}

TEST_CASE("the topology probe's output", "[topology]") {
  CHECK(parse_cpu_list("0-3,8,10-11") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(parse_cpu_list("") == std::vector<int>{});
  CHECK_FALSE(parse_cpu_list("3-1"));
  CHECK_FALSE(parse_cpu_list("a"));
  CHECK(cpu_list_text({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  HostTopology t = parse_topology("online 0-7\nallowed 0-5\nnode 0 0-3\nnode 1 4-7\nnode 2 \ngpu 0 1\ngpu 1 -1\n");
  REQUIRE(t.known());
  CHECK(t.cpus == std::vector<int>{0, 1, 2, 3, 4, 5});
  REQUIRE(t.nodes.size() == 2);  // a node without CPUs (memory only) is no place for a rank
  CHECK(t.nodes[1].cpus == std::vector<int>{4, 5});
  CHECK(t.gpu_nodes == std::map<int, int>{{0, 1}});
  HostTopology none = parse_topology("online \nallowed 0-1\n");
  CHECK_FALSE(none.known());
  CHECK(none.why == "/sys/devices/system/cpu/online is missing or unreadable");
}

TEST_CASE("bind = core: each local rank its share of the host's CPUs", "[render][binding]") {
  NoOmpThreads no_omp;
  JobSpec job = test::all_frameworks_job();
  job.launch.bind = CpuBind::core;
  Inventory hosts = {test::make_host("a", 3)};
  Plan plan = must_plan(job, hosts);
  LaunchContext ctx;
  ctx.topologies = {two_nodes()};
  CHECK(rank_binding(job, plan, 0, ctx).cpus == std::vector<int>{0, 1, 2});
  CHECK(rank_binding(job, plan, 1, ctx).cpus == std::vector<int>{3, 4, 5});
  CHECK(rank_binding(job, plan, 2, ctx).cpus == std::vector<int>{6, 7});
  CHECK(rank_binding(job, plan, 2, ctx).why == "share 3 of 3 of the host's 8 CPUs");
  CHECK(value_of(rank_env(job, plan, 0, ctx), "OMP_NUM_THREADS") == "3");
  CHECK(value_of(rank_env(job, plan, 2, ctx), "OMP_NUM_THREADS") == "2");
  job.env_cli = {{"OMP_NUM_THREADS", "7"}};
  job.env = job.env_cli;
  CHECK(value_of(rank_env(job, plan, 0, ctx), "OMP_NUM_THREADS") == "7");
  // More ranks than CPUs: one each, shared round robin.
  ctx.topologies = {parse_topology("online 0-1\n")};
  CHECK(rank_binding(job, plan, 2, ctx).cpus == std::vector<int>{0});
  CHECK(rank_binding(job, plan, 2, ctx).why == "3 ranks share the host's 2 CPUs");
}

TEST_CASE("bind = numa and gpu; an unknown host runs unbound", "[render][binding]") {
  NoOmpThreads no_omp;
  JobSpec job = test::all_frameworks_job();
  job.launch.bind = CpuBind::numa;
  Inventory hosts = {test::make_host("a", 4, {0, 1, 2, 3})};
  Plan plan = must_plan(job, hosts);
  LaunchContext ctx;
  ctx.topologies = {two_nodes()};
  CHECK(rank_binding(job, plan, 1, ctx).cpus == std::vector<int>{0, 1, 2, 3});
  CHECK(rank_binding(job, plan, 2, ctx).cpus == std::vector<int>{4, 5, 6, 7});
  CHECK(rank_binding(job, plan, 2, ctx).why == "NUMA node 1");
  job.launch.bind = CpuBind::gpu;
  CHECK(rank_binding(job, plan, 0, ctx).cpus == std::vector<int>{4, 5, 6, 7});  // GPU 0 is on node 1
  CHECK(rank_binding(job, plan, 1, ctx).why == "NUMA node 0 of GPU 1");
  CHECK(rank_binding(job, plan, 2, ctx).why == "NUMA node 1 (GPU 2's NUMA node is unknown: bound as numa)");
  ctx.topologies = {topology_unknown("ssh: connection refused")};
  CHECK(rank_binding(job, plan, 0, ctx).cpus.empty());
  CHECK(rank_binding(job, plan, 0, ctx).why == "unbound: ssh: connection refused");
  CHECK(value_of(rank_env(job, plan, 0, ctx), "OMP_NUM_THREADS") == "1");  // torch's rule stays
  job.launch.bind = CpuBind::none;
  ctx.topologies = {two_nodes()};
  CHECK(rank_binding(job, plan, 0, ctx).cpus.empty());
  CHECK(bindings_text(job, plan, ctx).empty());
}

TEST_CASE("a bound rank's launch carries its CPUs; remote hosts run it under ddl pin", "[render][binding]") {
  JobSpec job = test::all_frameworks_job();
  job.launch.bind = CpuBind::core;
  Plan plan = must_plan(job, {test::make_host("a", 2)});
  LaunchContext ctx;
  ctx.topologies = {parse_topology("online 0-3\n")};
  auto launches = build_launches(job, plan, ctx, RankPlace::this_machine, nullptr);
  CHECK(launches[1].cpus == std::vector<int>{2, 3});
  CHECK(pinned_argv(launches[1].argv, launches[1].cpus, "/opt/ddl") ==
        std::vector<std::string>{"/opt/ddl", "pin", "2-3", "--", "python3", "train.py", "--lr", "0.1"});
  CHECK(pinned_argv({"x"}, {}, "/opt/ddl") == std::vector<std::string>{"x"});
}
