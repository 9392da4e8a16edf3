// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

#include "src/render/launches.hpp"
#include "src/render/frameworks/tensorflow.hpp"
#include "src/render/render_env.hpp"
#include "src/render/render_files.hpp"
#include "src/render/render_plan.hpp"
#include "tests/unit/golden.hpp"
#include "tests/unit/plan_fixtures.hpp"

using namespace ddl;

namespace {

Plan must_plan(const JobSpec& job, const Inventory& inventory) {
  auto plan = make_plan(job, inventory);
  REQUIRE(plan);
  return *plan;
}

std::string env_text(const EnvList& env) {
  std::string out;
  for (const auto& [name, value] : env) {
    out += name + "=" + value + "\n";
  }
  return out;
}

std::string value_of(const EnvList& env, std::string_view name) {
  for (const auto& [key, value] : env) {
    if (key == name) {
      return value;
    }
  }
  return "<unset>";
}

struct NoOmpThreads {
  NoOmpThreads() { ::unsetenv("OMP_NUM_THREADS"); }
};

} // namespace

TEST_CASE("renderers: 2 hosts x 2 slots, every framework", "[render]") {
  NoOmpThreads clean;
  const JobSpec job = test::all_frameworks_job();
  const Plan plan = must_plan(job, test::two_by_two());
  LaunchContext ctx;
  test::check_golden("2x2_plan.txt", plan_table(job, plan, ctx));
  test::check_golden("2x2_plan.json", plan_json(job, plan, ctx));
  test::check_golden("2x2_env_rank3.txt", env_text(rank_env(job, plan, 3, ctx)));
  test::check_golden("2x2_hostfile.txt", openmpi_hostfile(plan));
  test::check_golden("2x2_mpich_hostfile.txt", mpich_hostfile(plan));
  test::check_golden("2x2_deepspeed_hostfile.txt", deepspeed_hostfile(plan));
  for (int rank = 0; rank < 4; ++rank) {
    test::check_golden("2x2_tf_config_rank" + std::to_string(rank) + ".json",
                       tf_config(job, plan, rank) + "\n");
  }
}

TEST_CASE("renderers: uneven slots, GPUs, tensorflow roles", "[render]") {
  NoOmpThreads clean;
  const JobSpec job = test::uneven_job();
  const Plan plan = must_plan(job, test::uneven_hosts());
  LaunchContext ctx;
  ctx.attempt = 1;
  ctx.master_port = 41000;
  ctx.rendezvous = "10.0.0.1:5000";
  test::check_golden("uneven_plan.txt", plan_table(job, plan, ctx));
  test::check_golden("uneven_plan.json", plan_json(job, plan, ctx));
  test::check_golden("uneven_env_rank1.txt", env_text(rank_env(job, plan, 1, ctx)));
  test::check_golden("uneven_hostfile.txt", openmpi_hostfile(plan));
  test::check_golden("uneven_mpich_hostfile.txt", mpich_hostfile(plan));
  test::check_golden("uneven_tf_config_rank4.json", tf_config(job, plan, 4) + "\n");
}

TEST_CASE("rank_env: the token is set for the worker but never printed", "[render]") {
  const JobSpec job = test::all_frameworks_job();
  const Plan plan = must_plan(job, test::two_by_two());
  LaunchContext ctx;
  ctx.token = "s3cret-token";
  CHECK(value_of(rank_env(job, plan, 0, ctx), "DDL_TOKEN") == "s3cret-token");
  CHECK(plan_table(job, plan, ctx).find("s3cret") == std::string::npos);
  CHECK(plan_json(job, plan, ctx).find("s3cret") == std::string::npos);
}

TEST_CASE("rank_env: torch rules", "[render]") {
  JobSpec job;
  job.name = "t";
  const Plan shared = must_plan(job, {test::make_host("a", 2)});
  const Plan alone = must_plan(job, {test::make_host("a", 1), test::make_host("b", 1)});
  LaunchContext ctx;
  SECTION("OMP_NUM_THREADS=1 only when unset and ranks share a host") {
    ::unsetenv("OMP_NUM_THREADS");
    CHECK(value_of(rank_env(job, shared, 0, ctx), "OMP_NUM_THREADS") == "1");
    CHECK(value_of(rank_env(job, alone, 0, ctx), "OMP_NUM_THREADS") == "<unset>");
    // The launcher's own value is copied, as torchrun does.
    ::setenv("OMP_NUM_THREADS", "8", 1);
    CHECK(value_of(rank_env(job, shared, 0, ctx), "OMP_NUM_THREADS") == "8");
    CHECK(value_of(rank_env(job, alone, 0, ctx), "OMP_NUM_THREADS") == "8");
    job.env = {{"OMP_NUM_THREADS", "2"}};
    CHECK(value_of(rank_env(job, shared, 0, ctx), "OMP_NUM_THREADS") == "2");
    ::unsetenv("OMP_NUM_THREADS");
  }
  SECTION("torch's error handling: async NCCL errors on, an error file per rank") {
    CHECK(value_of(rank_env(job, shared, 1, ctx), "TORCH_NCCL_ASYNC_ERROR_HANDLING") == "1");
    CHECK(value_of(rank_env(job, shared, 1, ctx), "NCCL_ASYNC_ERROR_HANDLING") == "1");
    CHECK(value_of(rank_env(job, shared, 1, ctx), "TORCHELASTIC_ERROR_FILE") == "<unset>");
    ctx.error_dir = "/e";
    ctx.attempt = 2;
    CHECK(value_of(rank_env(job, shared, 1, ctx), "TORCHELASTIC_ERROR_FILE") == "/e/rank-1.attempt-2.error.json");
    job.env = {{"NCCL_ASYNC_ERROR_HANDLING", "0"}, {"TORCHELASTIC_ERROR_FILE", "/mine"}};
    const auto env = rank_env(job, shared, 1, ctx);
    CHECK(std::ranges::count_if(env, [](const auto& kv) { return kv.first == "NCCL_ASYNC_ERROR_HANDLING"; }) == 1);
    CHECK(value_of(env, "NCCL_ASYNC_ERROR_HANDLING") == "0");
    CHECK(value_of(env, "TORCHELASTIC_ERROR_FILE") == "/mine");
    // Passed from the launcher's environment: also the user's.
    job.env.clear();
    job.env_pass = {"TORCH_NCCL_*"};
    ::setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", 1);
    CHECK(value_of(rank_env(job, shared, 1, ctx), "TORCH_NCCL_ASYNC_ERROR_HANDLING") == "<unset>");
    CHECK(user_sets_env(job, "TORCH_NCCL_ASYNC_ERROR_HANDLING"));
    ::unsetenv("TORCH_NCCL_ASYNC_ERROR_HANDLING");
  }
  SECTION("never TORCHELASTIC_USE_AGENT_STORE") {
    CHECK(value_of(rank_env(job, shared, 1, ctx), "TORCHELASTIC_USE_AGENT_STORE") == "<unset>");
  }
  SECTION("MASTER_PORT: the resolved port, else the job's, else a placeholder") {
    job.torch.master_port = 29500;
    CHECK(value_of(rank_env(job, shared, 1, ctx), "MASTER_PORT") == "29500");
    ctx.master_port = 12345;
    CHECK(value_of(rank_env(job, shared, 1, ctx), "MASTER_PORT") == "12345");
    ctx.master_port = 0;
    job.torch.master_port = 0;
    CHECK(value_of(rank_env(job, shared, 1, ctx), "MASTER_PORT") == "<free-port>");
  }
  SECTION("job.env wins over ddl's own names, once") {
    job.env = {{"MASTER_ADDR", "override"}};
    const auto env = rank_env(job, shared, 0, ctx);
    CHECK(value_of(env, "MASTER_ADDR") == "override");
    CHECK(std::ranges::count_if(env, [](const auto& kv) { return kv.first == "MASTER_ADDR"; }) == 1);
  }
}

TEST_CASE("rank_env: JAX device ids follow CUDA_VISIBLE_DEVICES", "[render]") {
  JobSpec job;
  job.frameworks = {Framework::jax};
  job.torch.master_port = 29500;
  const Plan plan = must_plan(job, {test::make_host("a", 2, {2, 3, 4, 5})});
  const auto env = rank_env(job, plan, 1, LaunchContext{});
  CHECK(value_of(env, "CUDA_VISIBLE_DEVICES") == "4,5");
  CHECK(value_of(env, "JAX_LOCAL_DEVICE_IDS") == "0,1");
  CHECK(value_of(env, "JAX_COORDINATOR_ADDRESS") == "a:29501");
}

TEST_CASE("passed_env: names and PREFIX_* globs", "[render]") {
  JobSpec job;
  job.env_pass = {"PYTHONPATH", "NCCL_*", "MISSING"};
  std::string e1 = "NCCL_SOCKET_IFNAME=eth0", e2 = "PYTHONPATH=/x", e3 = "NCCL_DEBUG=INFO",
              e4 = "HOME=/root", e5 = "NCCLX=no", e6 = "PYTHONPATHS=no";
  char* environ_list[] = {e1.data(), e2.data(), e3.data(), e4.data(), e5.data(), e6.data(), nullptr};
  const EnvList passed = passed_env(job, environ_list);
  const EnvList expected = {
      {"PYTHONPATH", "/x"}, {"NCCL_DEBUG", "INFO"}, {"NCCL_SOCKET_IFNAME", "eth0"}};
  CHECK(passed == expected);
}

TEST_CASE("plan_json: always valid UTF-8", "[render]") {
  NoOmpThreads clean;
  JobSpec job = test::all_frameworks_job();
  job.name = "bad\xff";
  job.env.emplace_back("NOTE", "q\"\xfe\n");
  const Plan plan = must_plan(job, test::two_by_two());
  const std::string json = plan_json(job, plan, LaunchContext{});
  CHECK(json.starts_with("{\"job\":\"bad\xef\xbf\xbd\",\"world_size\":4,"));
  CHECK(json.find("\"NOTE\":\"q\\\"\xef\xbf\xbd\\n\"") != std::string::npos);
  CHECK(json.find('\xff') == std::string::npos);
  CHECK(json.find('\xfe') == std::string::npos);
}

TEST_CASE("hostfiles: IPv6 names are bracketed only in host:N", "[render]") {
  const Plan plan = must_plan(JobSpec{}, {test::make_host("fe80::1", 2), test::make_host("b", 1)});
  CHECK(mpich_hostfile(plan) == "[fe80::1]:2\nb:1\n");
  CHECK(openmpi_hostfile(plan) == "fe80::1 slots=2\nb slots=1\n");
  // What ddl renders, ddl reads back.
  auto again = parse_hostfile(mpich_hostfile(plan), "rendered");
  REQUIRE(again);
  CHECK((*again)[0].name == "fe80::1");
  CHECK((*again)[0].slots == 2);
}

TEST_CASE("launcher env: login variables for local ranks, env_pass alone for remote ones", "[render]") {
  std::string path = "PATH=/launcher/bin", home = "HOME=/root", nccl = "NCCL_DEBUG=INFO", pwd = "PWD=/here";
  char* environ_of_launcher[] = {path.data(), home.data(), nccl.data(), pwd.data(), nullptr};
  JobSpec job;
  job.env_pass = {"NCCL_*", "P*"};
  EnvList local = launcher_env(job, RankPlace::this_machine, environ_of_launcher);
  CHECK(local == EnvList{{"PATH", "/launcher/bin"}, {"HOME", "/root"}, {"NCCL_DEBUG", "INFO"}, {"PWD", "/here"}});
  // A glob never carries the launcher's PATH or PWD to another machine.
  CHECK(launcher_env(job, RankPlace::remote, environ_of_launcher) == EnvList{{"NCCL_DEBUG", "INFO"}});
  // Named literally, it does.
  job.env_pass = {"NCCL_*", "PATH"};
  CHECK(launcher_env(job, RankPlace::remote, environ_of_launcher) ==
        EnvList{{"NCCL_DEBUG", "INFO"}, {"PATH", "/launcher/bin"}});
}
