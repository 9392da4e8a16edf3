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
  job.hosts.list = {ddl::HostSpec{"a", 2}};
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

TEST_CASE("parse_node_features: scontrol -o show node, one node a line", "[slurm][labels]") {
  const std::string out =
      "NodeName=h1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUTot=2 AvailableFeatures=a100,ib "
      "ActiveFeatures=a100,ib Gres=(null) NodeAddr=10.9.0.1 NodeHostName=h1 OS=Linux 6.1.0-18-amd64 #1 SMP "
      "Partitions=test State=IDLE Reason=ActiveFeatures=fake\n"
      "NodeName=h2 Arch=x86_64 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null)\n"
      "NodeName=h3 AvailableFeatures=knl,cache ActiveFeatures=cache\n";
  auto nodes = parse_node_features(out);
  CHECK(nodes == std::map<std::string, std::vector<std::string>>{
                     {"h1", {"a100", "ib"}}, {"h2", {}}, {"h3", {"cache"}}});
  CHECK(parse_node_features("").empty());
  CHECK(parse_node_features("slurm_load_node error: Invalid node name specified\n").empty());
}

TEST_CASE("add_slurm_labels: no call unless labels are used", "[slurm][labels]") {
  FakeEnv env;
  env.values = {{"SLURM_JOB_NODELIST", "h[1-2]"}, {"SLURM_JOB_PARTITION", "gpu"}};
  Inventory hosts{Host{"h1", "h1", 1, {}, "slurm"}, Host{"h2", "h2", 1, {}, "slurm"}};
  REQUIRE(add_slurm_labels(hosts, env.fn(), LabelNeed::none));
  CHECK(hosts[0].labels.empty());
  SECTION("scontrol failing: required stops, naming it; shown warns and keeps the partition") {
    // scontrol not installed (not on PATH): a real case, and one that fails at once.
    const std::string saved = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
    ::setenv("PATH", "/nonexistent", 1);
    auto required = add_slurm_labels(hosts, env.fn(), LabelNeed::required);
    REQUIRE_FALSE(required);
    CHECK(required.error().code == ExitCode::launch);
    CHECK(required.error().message ==
          "[placement] uses host labels (constraints or order), but the features of the allocation's nodes could "
          "not be read: cannot run scontrol: No such file or directory; run ddl where scontrol works, or take the "
          "labels out of [placement]");
    Inventory shown{Host{"h1", "h1", 1, {}, "slurm"}};
    CHECK(add_slurm_labels(shown, env.fn(), LabelNeed::shown));
    CHECK(format_labels(shown[0].labels) == "partition=gpu");
    ::setenv("PATH", saved.c_str(), 1);
  }
}
