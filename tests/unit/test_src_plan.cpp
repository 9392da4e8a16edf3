// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/plan/plan.hpp"
#include "src/plan/pmix_hosts.hpp"
#include "tests/unit/plan_fixtures.hpp"

using namespace ddl;
using ddl::test::make_host;

namespace {
std::vector<int> v(std::initializer_list<int> values) { return values; }
} // namespace

TEST_CASE("make_plan fills hosts in order, host by host", "[plan]") {
  JobSpec job;
  job.name = "j";
  auto plan = make_plan(job, {make_host("a", 2), make_host("b", 3)});
  REQUIRE(plan);
  CHECK(plan->world_size == 5);
  REQUIRE(plan->ranks.size() == 5);
  CHECK(plan->hosts.size() == 2);
  const int expect_host[] = {0, 0, 1, 1, 1};
  const int expect_local[] = {0, 1, 0, 1, 2};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(plan->ranks[i].rank == static_cast<int>(i));
    CHECK(plan->ranks[i].host_index == static_cast<std::size_t>(expect_host[i]));
    CHECK(plan->ranks[i].node_rank == expect_host[i]);
    CHECK(plan->ranks[i].local_rank == expect_local[i]);
  }
  CHECK(plan->ranks[0].local_size == 2);
  CHECK(plan->ranks[4].local_size == 3);
}

TEST_CASE("make_plan: np below the slots drops unused hosts", "[plan]") {
  JobSpec job;
  job.launch.np.max = 3;
  auto plan = make_plan(job, {make_host("a", 2), make_host("b", 2), make_host("c", 2)});
  REQUIRE(plan);
  CHECK(plan->hosts.size() == 2);
  CHECK(plan->ranks[2].local_size == 1);
  CHECK(plan->ranks[2].node_rank == 1);
}

TEST_CASE("make_plan: --map-by node deals ranks over the hosts; --oversubscribe shares out the rest", "[plan]") {
  JobSpec job;
  job.placement.by_node = true;
  job.launch.np.max = 5;
  auto plan = make_plan(job, {make_host("a", 4), make_host("b", 2), make_host("c", 4)});
  REQUIRE(plan);
  const int expect_host[] = {0, 1, 2, 0, 1};
  const int expect_local[] = {0, 0, 0, 1, 1};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(plan->ranks[i].rank == static_cast<int>(i));
    CHECK(plan->ranks[i].host_index == static_cast<std::size_t>(expect_host[i]));
    CHECK(plan->ranks[i].local_rank == expect_local[i]);
  }
  job.launch.np.max = 8;  // b is full after two: a and c take the rest in turn
  plan = make_plan(job, {make_host("a", 4), make_host("b", 2), make_host("c", 4)});
  REQUIRE(plan);
  CHECK(plan->ranks[6].host_index == 0);
  CHECK(plan->ranks[7].host_index == 2);
  CHECK(plan->ranks[6].local_rank == 2);

  JobSpec over;
  over.placement.oversubscribe = true;
  over.launch.np.max = 5;
  plan = make_plan(over, {make_host("a", 1), make_host("b", 1)});
  REQUIRE(plan);
  CHECK(plan->world_size == 5);
  CHECK(plan->ranks[2].host_index == 0);
  CHECK(plan->ranks[3].host_index == 1);
  CHECK(plan->ranks[0].local_size == 3);
  CHECK(plan->placement.find("oversubscribed by 3") != std::string::npos);
  over.placement.oversubscribe = false;
  CHECK_FALSE(make_plan(over, {make_host("a", 1), make_host("b", 1)}));
}

TEST_CASE("make_plan: np errors name both numbers, exit 2", "[plan]") {
  JobSpec job;
  job.launch.np.max = 9;
  auto plan = make_plan(job, {make_host("a", 4), make_host("b", 4)});
  REQUIRE_FALSE(plan);
  CHECK(plan.error().code == ExitCode::usage);
  CHECK(plan.error().message == "np 9 is more than the 8 slots of 2 hosts");
  job.launch.np.max = 0;
  plan = make_plan(job, {make_host("a", 4)});
  REQUIRE_FALSE(plan);
  CHECK(plan.error().message == "np must be at least 1, not 0");
  CHECK_FALSE(make_plan(JobSpec{}, {}));
}

TEST_CASE("make_plan: Horovod cross rank and size", "[plan]") {
  auto plan = make_plan(JobSpec{}, {make_host("a", 2), make_host("b", 1), make_host("c", 2)});
  REQUIRE(plan);
  // local_rank 0 lives on a, b, c; local_rank 1 only on a and c.
  CHECK(plan->ranks[0].cross_rank == 0);
  CHECK(plan->ranks[0].cross_size == 3);
  CHECK(plan->ranks[2].cross_rank == 1);
  CHECK(plan->ranks[3].cross_rank == 2);
  CHECK(plan->ranks[1].cross_size == 2);
  CHECK(plan->ranks[4].cross_rank == 1);
  CHECK(plan->ranks[4].cross_size == 2);
}

TEST_CASE("make_plan: GPU assignment", "[plan]") {
  JobSpec job;
  SECTION("unknown GPUs: the slot index") {
    auto plan = make_plan(job, {make_host("a", 2), make_host("b", 2)});
    REQUIRE(plan);
    CHECK(plan->ranks[1].gpus == v({1}));
    CHECK(plan->ranks[2].gpus == v({0}));
  }
  SECTION("known GPUs in contiguous blocks") {
    auto plan = make_plan(job, {make_host("a", 2, {0, 1, 2, 3, 4})});
    REQUIRE(plan);
    CHECK(plan->ranks[0].gpus == v({0, 1}));
    CHECK(plan->ranks[1].gpus == v({2, 3}));
  }
  SECTION("fewer GPUs than ranks: shared round-robin") {
    auto plan = make_plan(job, {make_host("a", 3, {4, 6})});
    REQUIRE(plan);
    CHECK(plan->ranks[0].gpus == v({4}));
    CHECK(plan->ranks[1].gpus == v({6}));
    CHECK(plan->ranks[2].gpus == v({4}));
  }
  SECTION("the local probe found none: no GPU") {
    auto plan = make_plan(job, {make_host("localhost", 2, {}, "local")});
    REQUIRE(plan);
    CHECK(plan->ranks[1].gpus.empty());
  }
  SECTION("a probe found none on a host of a list: no GPU") {
    Host probed = make_host("a", 2);
    probed.gpus_probed = true;
    auto plan = make_plan(job, {probed, make_host("b", 2)});
    REQUIRE(plan);
    CHECK(plan->ranks[1].gpus.empty());
    CHECK(plan->ranks[3].gpus == v({1}));
  }
  SECTION("bind_gpus = false") {
    job.launch.bind_gpus = false;
    auto plan = make_plan(job, {make_host("a", 2, {0, 1})});
    REQUIRE(plan);
    CHECK(plan->ranks[1].gpus.empty());
  }
}

TEST_CASE("mark_no_gpus: a host found without GPUs after the plan binds none", "[plan]") {
  JobSpec job;
  auto plan = make_plan(job, {make_host("a", 2), make_host("b", 2)});
  REQUIRE(plan);
  CHECK_FALSE(gpus_known(plan->hosts[1]));
  mark_no_gpus(*plan, 1);
  CHECK(gpus_known(plan->hosts[1]));
  CHECK(plan->ranks[1].gpus == v({1}));
  CHECK(plan->ranks[2].gpus.empty());
  CHECK(plan->ranks[3].gpus.empty());
}

TEST_CASE("make_plan: tensorflow roles fill chief, worker, ps, evaluator", "[plan]") {
  auto plan = make_plan(test::uneven_job(), test::uneven_hosts());
  REQUIRE(plan);
  const char* roles[] = {"chief", "worker", "worker", "ps", "evaluator"};
  const int indices[] = {0, 0, 1, 0, 0};
  const int ports[] = {3000, 3001, 3002, 3000, 3000};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(plan->ranks[i].tf_role == roles[i]);
    CHECK(plan->ranks[i].tf_index == indices[i]);
    CHECK(plan->ranks[i].tf_port == ports[i]);
  }
}

TEST_CASE("make_plan: tensorflow counts must fit", "[plan]") {
  JobSpec job;
  job.frameworks = {Framework::tensorflow};
  job.tensorflow.ps = 2;
  job.tensorflow.evaluator = 1;
  auto plan = make_plan(job, {make_host("a", 3)});
  REQUIRE_FALSE(plan);
  CHECK(plan.error().code == ExitCode::usage);
  CHECK(plan.error().message ==
        "tensorflow roles need 4 ranks (chief 1 + ps 2 + evaluator 1) but the job has only 3");
  job.tensorflow = {};
  job.tensorflow.chief = 2;
  CHECK_FALSE(make_plan(job, {make_host("a", 3)}));
  SECTION("without tensorflow the counts do not matter") {
    job.frameworks = {Framework::torch};
    auto ok = make_plan(job, {make_host("a", 3)});
    REQUIRE(ok);
    CHECK(ok->ranks[0].tf_role.empty());
  }
}

TEST_CASE("make_plan: more ranks than ddl's limit is an error before any allocation", "[plan]") {
  JobSpec job;
  job.name = "j";
  Inventory many;
  for (int i = 0; i < 3; ++i) {
    many.push_back(make_host("h" + std::to_string(i), 500'000));
  }
  auto plan = make_plan(job, many);
  REQUIRE_FALSE(plan);
  CHECK(plan.error().code == ExitCode::usage);
  CHECK(plan.error().message == "1500000 ranks is above ddl's limit of 1000000");
}

TEST_CASE("make_plan: cross ranks on a wide host stay linear", "[plan]") {
  JobSpec job;
  job.name = "j";
  auto plan = make_plan(job, {make_host("a", 200'000), make_host("b", 3)});
  REQUIRE(plan);
  CHECK(plan->ranks[200'001].cross_rank == 1);  // b's local rank 1, after a's
  CHECK(plan->ranks[200'001].cross_size == 2);
  CHECK(plan->ranks[199'999].cross_size == 1);
}

TEST_CASE("pmix_hosts: one gang rank per host, each host's MPI rank count", "[plan][pmix]") {
  auto ranks = make_plan(JobSpec{}, {make_host("a", 2, {0, 1}), make_host("b", 3, {4, 5, 6})});
  REQUIRE(ranks);
  auto hosts = pmix_hosts(*ranks);
  REQUIRE(hosts);
  CHECK(hosts->ranks == v({2, 3}));
  const Plan& gang = hosts->plan;
  CHECK(gang.world_size == 2);
  REQUIRE(gang.hosts.size() == 2);
  CHECK(gang.hosts[0].name == "a");
  CHECK(gang.hosts[1].name == "b");
  REQUIRE(gang.ranks.size() == 2);
  CHECK(gang.ranks[1].rank == 1);
  CHECK(gang.ranks[1].host_index == 1);
  CHECK(gang.ranks[1].local_rank == 0);
  CHECK(gang.ranks[1].local_size == 1);
  CHECK(gang.ranks[1].node_rank == 1);
  CHECK(gang.ranks[0].gpus == v({0, 1}));  // every GPU of the host's ranks
  CHECK(gang.ranks[1].gpus == v({4, 5, 6}));
}

TEST_CASE("pmix_hosts: a host whose ranks are apart is refused, exit 2", "[plan][pmix]") {
  auto ranks = make_plan(JobSpec{}, {make_host("a", 1), make_host("b", 1)});
  REQUIRE(ranks);
  ranks->ranks.push_back(ranks->ranks.front());  // a's ranks: 0 and 2
  ranks->ranks.back().rank = 2;
  auto hosts = pmix_hosts(*ranks);
  REQUIRE_FALSE(hosts);
  CHECK(hosts.error().code == ExitCode::usage);
  CHECK(hosts.error().message ==
        "mpi.launch \"pmix\": the ranks of host a are not adjacent in the plan (MPI ranks fill hosts in order)");
}
