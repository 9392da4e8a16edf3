// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>

#include "src/inventory/inventory.hpp"

using namespace ddl;

namespace {

struct FakeEnv {
  std::map<std::string, std::string> values;
  std::function<const char*(const char*)> fn() const {
    return [this](const char* name) -> const char* {
      auto it = values.find(name);
      return it == values.end() ? nullptr : it->second.c_str();
    };
  }
};

} // namespace

TEST_CASE("parse_slurm_tasks_per_node", "[slurm]") {
  CHECK(*parse_slurm_tasks_per_node("2(x3),1") == std::vector<int>{2, 2, 2, 1});
  CHECK(*parse_slurm_tasks_per_node("4") == std::vector<int>{4});
  CHECK(*parse_slurm_tasks_per_node("1,8(x2)") == std::vector<int>{1, 8, 8});
  for (const char* bad : {"", "x", "2(3)", "2(x0)", "0", "2(x3", "-1", "2,,1"}) {
    INFO(bad);
    auto counts = parse_slurm_tasks_per_node(bad);
    REQUIRE_FALSE(counts);
    CHECK(counts.error().code == ExitCode::usage);
    CHECK(counts.error().message.find("expected a form like '2(x3),1'") != std::string::npos);
  }
}

TEST_CASE("slurm_inventory", "[slurm]") {
  FakeEnv env;
  SECTION("nodes and task counts") {
    env.values = {{"SLURM_JOB_NODELIST", "n1,n2,n3"}, {"SLURM_TASKS_PER_NODE", "2(x2),1"}};
    auto hosts = slurm_inventory(env.fn());
    REQUIRE(hosts);
    REQUIRE(hosts->size() == 3);
    CHECK((*hosts)[0].name == "n1");
    CHECK((*hosts)[0].address == "n1");
    CHECK((*hosts)[1].slots == 2);
    CHECK((*hosts)[2].slots == 1);
    CHECK((*hosts)[2].source == "slurm");
    CHECK((*hosts)[2].gpus.empty());
  }
  SECTION("GPUs on node give slots and GPU ids") {
    env.values = {{"SLURM_JOB_NODELIST", "g1,g2"}, {"SLURM_GPUS_ON_NODE", "4"}};
    auto hosts = slurm_inventory(env.fn());
    REQUIRE(hosts);
    CHECK((*hosts)[1].slots == 4);
    CHECK((*hosts)[1].gpus == std::vector<int>{0, 1, 2, 3});
  }
  SECTION("missing variables are clear errors") {
    auto none = slurm_inventory(env.fn());
    REQUIRE_FALSE(none);
    CHECK(none.error().message.starts_with("hosts.slurm: SLURM_JOB_NODELIST is not set"));
    env.values = {{"SLURM_JOB_NODELIST", "n1"}};
    auto no_slots = slurm_inventory(env.fn());
    REQUIRE_FALSE(no_slots);
    CHECK(no_slots.error().message ==
          "hosts.slurm: neither SLURM_TASKS_PER_NODE nor SLURM_GPUS_ON_NODE is set, so the slots "
          "per node are unknown");
  }
  SECTION("counts must match the nodes") {
    env.values = {{"SLURM_JOB_NODELIST", "n1,n2"}, {"SLURM_TASKS_PER_NODE", "2(x3)"}};
    auto hosts = slurm_inventory(env.fn());
    REQUIRE_FALSE(hosts);
    CHECK(hosts.error().message ==
          "SLURM_TASKS_PER_NODE '2(x3)' gives 3 task counts for the 2 nodes of SLURM_JOB_NODELIST 'n1,n2'");
  }
}

TEST_CASE("uses_slurm_allocation: automatic inside an allocation, off by slurm = false", "[slurm]") {
  const char* saved = std::getenv("SLURM_JOB_ID");
  std::string saved_value = saved == nullptr ? "" : saved;
  JobSpec job;
  ::unsetenv("SLURM_JOB_ID");
  CHECK_FALSE(uses_slurm_allocation(job));
  job.hosts.slurm = SlurmHosts::on;
  CHECK(uses_slurm_allocation(job));
  ::setenv("SLURM_JOB_ID", "42", 1);
  job.hosts.slurm = SlurmHosts::automatic;
  CHECK(uses_slurm_allocation(job));
  job.hosts.slurm = SlurmHosts::off;
  CHECK_FALSE(uses_slurm_allocation(job));
  job.hosts.slurm = SlurmHosts::automatic;
  job.hosts.list = {"a:2"};
  CHECK_FALSE(uses_slurm_allocation(job));
  job.hosts.list.clear();
  job.hosts.hostfile = "hosts.txt";
  CHECK_FALSE(uses_slurm_allocation(job));
  if (saved == nullptr) {
    ::unsetenv("SLURM_JOB_ID");
  } else {
    ::setenv("SLURM_JOB_ID", saved_value.c_str(), 1);
  }
}
