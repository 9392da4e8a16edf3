// SPDX-License-Identifier: MIT
// [job] setup and [container]: the argv each rank runs (issue 31).
#include <catch2/catch.hpp>

#include <algorithm>

#include "src/render/container.hpp"
#include "src/render/launches.hpp"
#include "tests/unit/plan_fixtures.hpp"

using namespace ddl;

namespace {

Plan must_plan(const JobSpec& job, const Inventory& inventory) {
  auto plan = make_plan(job, inventory);
  REQUIRE(plan);
  return *plan;
}

std::string value_of(const EnvList& env, std::string_view name) {
  for (const auto& [key, value] : env) {
    if (key == name) {
      return value;
    }
  }
  return "<unset>";
}

// The words after the guard's own (sh -c SCRIPT ddl-container RUNTIME NAME).
std::vector<std::string> runtime_words(const std::vector<std::string>& argv) {
  REQUIRE(argv.size() > 6);
  CHECK(argv[0] == "/bin/sh");
  CHECK(argv[3] == "ddl-container");
  return {argv.begin() + 6, argv.end()};
}

JobSpec container_job(ContainerRuntime runtime) {
  JobSpec job = test::all_frameworks_job();
  job.name = "res net/1";
  job.container.image = "team/train:1.4";
  job.container.runtime = runtime;
  job.container.mounts = {"/data:/data:ro"};
  job.container.options = {"--shm-size", "8g"};
  job.container.workdir = "/workspace";
  job.env = {{"SECRET", "s3cr3t value"}};
  return job;
}

} // namespace

TEST_CASE("setup runs before the program in the same shell", "[render][container]") {
  auto argv = setup_argv("source ~/venv/bin/activate", {"python3", "train.py"});
  REQUIRE(argv.size() == 7);
  CHECK(argv[0] == "/bin/sh");
  CHECK(argv[1] == "-c");
  CHECK(argv[2].find("command -v bash") != std::string::npos);
  CHECK(argv[3] == "ddl-setup");
  CHECK(argv[4] == "source ~/venv/bin/activate");
  CHECK(argv[5] == "python3");
  CHECK(setup_argv("", {"x"}) == std::vector<std::string>{"x"});
}

TEST_CASE("podman: one named container per rank, env by name only, its GPUs", "[render][container]") {
  JobSpec job = container_job(ContainerRuntime::podman);
  Plan plan = must_plan(job, {test::make_host("a", 2, {4, 6})});
  LaunchContext ctx;
  ctx.attempt = 1;
  ctx.container_tag = "0badf00d";
  auto launches = build_launches(job, plan, ctx, RankPlace::remote, nullptr);
  const auto words = runtime_words(launches[1].argv);
  CHECK(launches[1].argv[4] == "podman");
  CHECK(launches[1].argv[5] == "ddl-res-net-1-1-a1-0badf00d");
  const std::vector<std::string> head{"run", "--rm", "--name", "ddl-res-net-1-1-a1-0badf00d", "--network", "host",
                                      "--ipc", "host", "--pid", "host", "--device", "nvidia.com/gpu=6",
                                      "--workdir", "/workspace", "--volume", "/data:/data:ro"};
  CHECK(std::vector<std::string>(words.begin(), words.begin() + static_cast<long>(head.size())) == head);
  const std::vector<std::string> tail{"--shm-size", "8g", "team/train:1.4", "python3", "train.py", "--lr", "0.1"};
  CHECK(std::vector<std::string>(words.end() - static_cast<long>(tail.size()), words.end()) == tail);
  // Values never appear: only names after --env, the value in the env.
  CHECK(std::ranges::find(words, "SECRET") != words.end());
  for (const std::string& word : launches[1].argv) {
    CHECK(word.find("s3cr3t") == std::string::npos);
  }
  CHECK(value_of(launches[1].env, "SECRET") == "s3cr3t value");
  CHECK(value_of(launches[1].env, "CUDA_VISIBLE_DEVICES") == "0");  // GPU 6 is the container's 0
}

TEST_CASE("local ranks: the runtime client keeps its settings, the container gets the job's env",
          "[render][container]") {
  JobSpec job = container_job(ContainerRuntime::podman);
  Plan plan = must_plan(job, {test::make_host("a", 1)});
  std::string path = "PATH=/usr/bin", conf = "CONTAINERS_CONF=/x/containers.conf", lang = "LANG=C.UTF-8";
  char* environ_ptr[] = {path.data(), conf.data(), lang.data(), nullptr};
  auto launches = build_launches(job, plan, LaunchContext{}, RankPlace::this_machine, environ_ptr);
  const auto words = runtime_words(launches[0].argv);
  CHECK(value_of(launches[0].env, "PATH") == "/usr/bin");
  CHECK(value_of(launches[0].env, "CONTAINERS_CONF") == "/x/containers.conf");
  auto passes = [&](std::string_view name) {
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      if (words[i] == "--env" && words[i + 1] == name) return true;
    }
    return false;
  };
  CHECK(passes("DDL_RANK"));
  CHECK(passes("SECRET"));
  CHECK_FALSE(passes("PATH"));
  CHECK_FALSE(passes("LANG"));
  CHECK_FALSE(passes("CONTAINERS_CONF"));
  job.env_pass = {"LANG"};
  launches = build_launches(job, plan, LaunchContext{}, RankPlace::this_machine, environ_ptr);
  const auto named = runtime_words(launches[0].argv);
  CHECK(std::ranges::find(named, "LANG") != named.end());
}

TEST_CASE("docker: --gpus and the binding as --cpuset-cpus", "[render][container]") {
  JobSpec job = container_job(ContainerRuntime::docker);
  job.launch.bind = CpuBind::core;
  Plan plan = must_plan(job, {test::make_host("a", 2, {0, 1})});
  LaunchContext ctx;
  ctx.topologies = {parse_topology("online 0-7\n")};
  auto launches = build_launches(job, plan, ctx, RankPlace::remote, nullptr);
  const auto words = runtime_words(launches[1].argv);
  CHECK(launches[1].argv[4] == "docker");
  auto gpus = std::ranges::find(words, "--gpus");
  REQUIRE(gpus != words.end());
  CHECK(*(gpus + 1) == "\"device=1\"");
  auto cpuset = std::ranges::find(words, "--cpuset-cpus");
  REQUIRE(cpuset != words.end());
  CHECK(*(cpuset + 1) == "4-7");
}

TEST_CASE("a runtime that cannot give the GPUs: the report names [launch] bind_gpus", "[render][container]") {
  JobSpec job = container_job(ContainerRuntime::podman);
  Plan plan = must_plan(job, {test::make_host("a", 2)});
  auto launches = build_launches(job, plan, LaunchContext{}, RankPlace::remote, nullptr);
  const std::deque<std::string> cdi{"Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=1"};
  CHECK(container_gpu_failure(launches[1].argv, 126, cdi, 1, "a") ==
        "ddl: rank 1's container was given GPUs (nvidia.com/gpu=1) and podman exited 126 before the program ran: "
        "[launch] bind_gpus gives each rank the GPUs of its slots; if a has no such GPU (or no CDI spec for it), "
        "set [launch] bind_gpus = false\n");
  // Another failure, another code, or no GPU asked: nothing said.
  CHECK(container_gpu_failure(launches[1].argv, 125, {"Error: initializing source docker://x"}, 1, "a").empty());
  CHECK(container_gpu_failure(launches[1].argv, 1, cdi, 1, "a").empty());
  job.launch.bind_gpus = false;
  plan = must_plan(job, {test::make_host("a", 2)});
  launches = build_launches(job, plan, LaunchContext{}, RankPlace::remote, nullptr);
  CHECK(container_gpu_failure(launches[1].argv, 126, cdi, 1, "a").empty());
  // docker's words for it.
  job = container_job(ContainerRuntime::docker);
  plan = must_plan(job, {test::make_host("a", 2)});
  launches = build_launches(job, plan, LaunchContext{}, RankPlace::remote, nullptr);
  const std::string said = container_gpu_failure(
      launches[0].argv, 125, {"docker: Error response from daemon: could not select device driver \"\" with "
                              "capabilities: [[gpu]]."},
      0, "a");
  CHECK(said.find("GPUs (\"device=0\") and docker exited 125") != std::string::npos);
}

TEST_CASE("apptainer and a template: no guard, GPUs as the runtime takes them", "[render][container]") {
  JobSpec job = container_job(ContainerRuntime::apptainer);
  Plan plan = must_plan(job, {test::make_host("a", 1, {3})});
  auto launches = build_launches(job, plan, LaunchContext{}, RankPlace::remote, nullptr);
  CHECK(launches[0].argv == std::vector<std::string>{"apptainer", "exec", "--nv", "--bind", "/data:/data:ro", "--pwd",
                                                     "/workspace", "--shm-size", "8g", "team/train:1.4", "python3",
                                                     "train.py", "--lr", "0.1"});
  CHECK(value_of(launches[0].env, "CUDA_VISIBLE_DEVICES") == "3");
  job.container.runtime = ContainerRuntime::custom;
  job.container.custom = {"enroot", "start", "--env", "NVIDIA_VISIBLE_DEVICES={gpus}", "{image}", "{command}", "--x"};
  LaunchContext ctx;
  ctx.container_tag = "t";
  launches = build_launches(job, plan, ctx, RankPlace::remote, nullptr);
  CHECK(launches[0].argv == std::vector<std::string>{"enroot", "start", "--env", "NVIDIA_VISIBLE_DEVICES=3",
                                                     "team/train:1.4", "python3", "train.py", "--lr", "0.1", "--x"});
  job.container.custom = {"run-in", "{name}", "{image}"};
  launches = build_launches(job, plan, ctx, RankPlace::remote, nullptr);
  CHECK(launches[0].argv == std::vector<std::string>{"run-in", "ddl-res-net-1-0-a0-t", "team/train:1.4", "python3",
                                                     "train.py", "--lr", "0.1"});
}

TEST_CASE("setup runs inside the container", "[render][container]") {
  JobSpec job = container_job(ContainerRuntime::podman);
  job.setup = "source /opt/venv/bin/activate";
  Plan plan = must_plan(job, {test::make_host("a", 1)});
  auto launches = build_launches(job, plan, LaunchContext{}, RankPlace::remote, nullptr);
  const auto words = runtime_words(launches[0].argv);
  auto image = std::ranges::find(words, "team/train:1.4");
  REQUIRE(image != words.end());
  CHECK(*(image + 1) == "/bin/sh");
  CHECK(*(image + 4) == "ddl-setup");
  CHECK(*(image + 5) == "source /opt/venv/bin/activate");
}

TEST_CASE("[container] runs on the local and ssh backends only", "[render][container]") {
  JobSpec job = container_job(ContainerRuntime::podman);
  CHECK_FALSE(container_backend_problem(job, ContainerHost::guarded, "local"));
  CHECK_FALSE(container_backend_problem(job, ContainerHost::guarded, "ssh"));
  CHECK(container_backend_problem(job, ContainerHost::none, "mpirun") ==
        "[container]: works with the local and ssh backends, not mpirun (ddl could not remove a container that "
        "outlives its rank there)");
  CHECK(container_backend_problem(job, ContainerHost::pods, "kubernetes")->starts_with("[container]: the kubernetes backend runs"));
  job.container.image.clear();
  CHECK_FALSE(container_backend_problem(job, ContainerHost::pods, "kubernetes"));
}
