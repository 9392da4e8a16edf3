// SPDX-License-Identifier: MIT
// The per-host network interface variables (GLOO_SOCKET_IFNAME, ...).
#include <catch2/catch.hpp>

#include <string>

#include "src/render/launches.hpp"
#include "src/render/render_env.hpp"
#include "src/render/render_interfaces.hpp"
#include "src/util/net.hpp"
#include "tests/unit/plan_fixtures.hpp"

using namespace ddl;

namespace {

std::string value_of(const EnvList& env, std::string_view name) {
  for (const auto& [key, value] : env) {
    if (key == name) return value;
  }
  return "<unset>";
}

Plan two_hosts(const JobSpec& job) {
  auto plan = make_plan(job, test::two_by_two());
  REQUIRE(plan);
  return *plan;
}

} // namespace

TEST_CASE("interfaces: each host's ranks get that host's interface", "[render][interfaces]") {
  JobSpec job;
  job.command = {"true"};
  Plan plan = two_hosts(job);
  LaunchContext ctx;
  ctx.interfaces = {interface_found("eth0", "10.0.0.1", "10.0.0.1"), interface_found("ens5", "10.0.0.2", "10.0.0.1")};
  for (int rank : {0, 1}) {
    EnvList env = rank_env(job, plan, rank, ctx);
    CHECK(value_of(env, "GLOO_SOCKET_IFNAME") == "eth0");
    CHECK(value_of(env, "NCCL_SOCKET_IFNAME") == "eth0");
    CHECK(value_of(env, "HOROVOD_GLOO_IFACE") == "eth0");
  }
  CHECK(value_of(rank_env(job, plan, 3, ctx), "GLOO_SOCKET_IFNAME") == "ens5");
  CHECK(ctx.interfaces[0].why == "it holds rank 0's address");
  CHECK(ctx.interfaces[1].why == "it holds 10.0.0.2, where this host's route to 10.0.0.1 leaves from");
  // A host where none was found gets none; so does a context without any.
  ctx.interfaces[1] = interface_unknown("ip (iproute2) is not installed");
  CHECK(value_of(rank_env(job, plan, 3, ctx), "GLOO_SOCKET_IFNAME") == "<unset>");
  CHECK(value_of(rank_env(job, plan, 0, LaunchContext{}), "GLOO_SOCKET_IFNAME") == "<unset>");
}

TEST_CASE("interfaces: what the user sets wins (job.env, -x, env_pass)", "[render][interfaces]") {
  JobSpec job;
  job.command = {"true"};
  job.env = {{"GLOO_SOCKET_IFNAME", "mine"}};
  job.env_pass = {"NCCL_*"};
  Plan plan = two_hosts(job);
  LaunchContext ctx;
  ctx.interfaces = {interface_found("eth0", "10.0.0.1", "10.0.0.1"), interface_found("eth1", "10.0.0.2", "10.0.0.1")};
  std::string passed = "NCCL_SOCKET_IFNAME=passed";
  char* environ_list[] = {passed.data(), nullptr};
  for (RankPlace place : {RankPlace::this_machine, RankPlace::remote}) {
    auto launches = build_launches(job, plan, ctx, place, environ_list);
    REQUIRE(launches.size() == 4);
    CHECK(value_of(launches[3].env, "GLOO_SOCKET_IFNAME") == "mine");
    CHECK(value_of(launches[3].env, "NCCL_SOCKET_IFNAME") == "passed");
    CHECK(value_of(launches[3].env, "HOROVOD_GLOO_IFACE") == "eth1");
  }
}

TEST_CASE("interfaces: the loopback address is held by the loopback interface", "[util][interfaces]") {
  net::Route route = net::route_to("127.0.0.1");
  REQUIRE(route.end == net::RouteEnd::found);
  CHECK(route.address == "127.0.0.1");
  const std::string name = net::interface_holding("127.0.0.1");
  CHECK(!name.empty());
  CHECK(name.starts_with("lo"));
  CHECK(net::interface_holding("192.0.2.255").empty());
}

TEST_CASE("interfaces: --dry-run's table names each host, its interface and why", "[render][interfaces]") {
  JobSpec job;
  job.command = {"true"};
  Plan plan = two_hosts(job);
  std::vector<HostInterface> chosen = {interface_found("eth0", "10.0.0.1", "10.0.0.1"),
                                       interface_unknown("no route to 10.0.0.1: Network is unreachable")};
  CHECK(interfaces_text(plan, chosen, "10.0.0.1") ==
        "\nnetwork interface per host (toward rank 0 at 10.0.0.1; sets GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME, "
        "HOROVOD_GLOO_IFACE):\n"
        "HOST    INTERFACE  ADDRESS   WHY\n"
        "node-a  eth0       10.0.0.1  it holds rank 0's address\n"
        "node-b  -          -         no route to 10.0.0.1: Network is unreachable\n");
  CHECK(interfaces_text(plan, {}, "10.0.0.1").empty());
}
