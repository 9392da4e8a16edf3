// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/plan/plan.hpp"
#include "src/plan/placement.hpp"
#include "src/render/render_plan.hpp"
#include "tests/unit/golden.hpp"
#include "tests/unit/plan_fixtures.hpp"

using namespace ddl;
using ddl::test::make_host;

namespace {

Host labelled(std::string name, int slots, Labels labels) {
  Host host = make_host(std::move(name), slots);
  host.labels = std::move(labels);
  return host;
}

// "a:2 b:4": each placed host and its rank count, in rank order.
std::string placed(const Plan& plan) {
  std::vector<int> counts(plan.hosts.size(), 0);
  for (const auto& slot : plan.ranks) {
    ++counts[slot.host_index];
  }
  std::string out;
  for (std::size_t h = 0; h < plan.hosts.size(); ++h) {
    out += (out.empty() ? "" : " ") + plan.hosts[h].name + ":" + std::to_string(counts[h]);
  }
  return out;
}

Plan must(const JobSpec& job, const Inventory& hosts) {
  auto plan = make_plan(job, hosts);
  INFO((plan ? std::string() : plan.error().message));
  REQUIRE(plan);
  return *plan;
}

// Four hosts on two racks, racks interleaved in the listing.
Inventory racks() {
  return {labelled("h1", 4, {{"rack", "r1"}, {"gpu", "a100"}}), labelled("h2", 2, {{"rack", "r2"}, {"gpu", "a100"}}),
          labelled("h3", 8, {{"rack", "r1"}, {"gpu", "v100"}}), labelled("h4", 4, {{"rack", "r2"}})};
}

} // namespace

TEST_CASE("placement: without a strategy, the first hosts in order", "[placement]") {
  JobSpec job;
  job.launch.np.max = 6;
  CHECK(placed(must(job, racks())) == "h1:4 h2:2");
}

TEST_CASE("placement: pack is best fit, fewest hosts, fullest first", "[placement]") {
  JobSpec job;
  job.placement.strategy = PlacementStrategy::pack;
  job.launch.np.max = 6;
  CHECK(placed(must(job, racks())) == "h3:6");  // one host can take all: the smallest that can
  job.launch.np.max = 4;
  CHECK(placed(must(job, racks())) == "h1:4");  // h1 and h4 fit exactly; the first listed wins
  job.launch.np.max = 11;
  CHECK(placed(must(job, racks())) == "h1:3 h3:8");  // the largest, then the smallest that fits the rest
  job.launch.np.max = 18;
  CHECK(placed(must(job, racks())) == "h1:4 h2:2 h3:8 h4:4");
  Plan plan = must(job, racks());
  CHECK(plan.placement == "pack, 4 of 4 hosts");
  job.launch.np.max = 6;
  plan = must(job, racks());
  CHECK(plan.placement == "pack: best fit, fewest hosts, fullest first, 1 of 4 hosts");
  REQUIRE(plan.left_out.size() == 3);
  CHECK(plan.left_out[0].name == "h1");
  CHECK(plan.left_out[0].why == "not needed (pack: best fit, fewest hosts, fullest first)");
}

TEST_CASE("placement: spread uses as many hosts as it can, evenly", "[placement]") {
  JobSpec job;
  job.placement.strategy = PlacementStrategy::spread;
  job.launch.np.max = 6;
  CHECK(placed(must(job, racks())) == "h1:2 h2:2 h3:1 h4:1");
  job.launch.np.max = 3;
  CHECK(placed(must(job, racks())) == "h1:1 h2:1 h3:1");
  job.launch.np.max = 14;  // h2 is full after 2: the rest go round the others
  CHECK(placed(must(job, racks())) == "h1:4 h2:2 h3:4 h4:4");
}

TEST_CASE("placement: order by a label keeps a rack's hosts adjacent", "[placement]") {
  JobSpec job;
  job.placement.order = "rack";
  Plan plan = must(job, racks());
  CHECK(placed(plan) == "h1:4 h3:8 h2:2 h4:4");
  // Ranks of one rack are contiguous: ring neighbours stay inside it.
  CHECK(plan.hosts[plan.ranks[11].host_index].name == "h3");
  CHECK(plan.hosts[plan.ranks[12].host_index].name == "h2");
  CHECK(plan.placement == "hosts in order, 4 of 4 hosts, order by rack");
  // Hosts without the label come last.
  job.placement.order = "gpu";
  CHECK(placed(must(job, racks())) == "h1:4 h2:2 h3:8 h4:4");
  Inventory unlabelled = {make_host("x", 1), labelled("y", 1, {{"gpu", "a"}})};
  CHECK(placed(must(job, unlabelled)) == "y:1 x:1");
}

TEST_CASE("placement: constraints leave hosts out and say why", "[placement]") {
  JobSpec job;
  job.placement.constraints = {{"gpu", "a100"}};
  Plan plan = must(job, racks());
  CHECK(placed(plan) == "h1:4 h2:2");
  CHECK(plan.world_size == 6);  // np defaults to the slots of the hosts that qualify
  REQUIRE(plan.left_out.size() == 2);
  CHECK(plan.left_out[0].name == "h3");
  CHECK(plan.left_out[0].why == "constraint gpu=a100: has gpu=v100");
  CHECK(plan.left_out[1].why == "constraint gpu=a100: no label gpu");
  job.launch.np.max = 7;
  auto too_many = make_plan(job, racks());
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().code == ExitCode::usage);
  CHECK(too_many.error().message ==
        "np 7 is more than the 6 slots of 2 hosts (2 left out: h3 (constraint gpu=a100: has gpu=v100) "
        "h4 (constraint gpu=a100: no label gpu))");
}

TEST_CASE("placement: min_np runs on fewer slots, never below min_np", "[placement]") {
  JobSpec job;
  job.launch.np.max = 8;
  job.launch.np.min = 4;
  Inventory hosts = {make_host("a", 2), make_host("b", 2), make_host("c", 2)};
  CHECK(must(job, hosts).world_size == 6);
  hosts.pop_back();
  CHECK(must(job, hosts).world_size == 4);
  hosts.pop_back();
  auto below = make_plan(job, hosts);
  REQUIRE_FALSE(below);
  CHECK(below.error().message == "2 slots left on 1 eligible host, below min_np 4");
}

TEST_CASE("placement: the plan table and JSON say how and why", "[placement][render]") {
  JobSpec job;
  job.name = "placed";
  job.command = {"python3", "train.py"};
  job.placement.strategy = PlacementStrategy::pack;
  job.placement.constraints = {{"gpu", "a100"}};
  job.placement.order = "rack";
  job.launch.np.max = 5;
  const Plan plan = must(job, racks());
  LaunchContext ctx;
  test::check_golden("placement_plan.txt", plan_table(job, plan, ctx));
  test::check_golden("placement_plan.json", plan_json(job, plan, ctx));
}
