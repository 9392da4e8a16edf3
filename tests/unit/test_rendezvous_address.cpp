// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "rendezvous/address.hpp"

using namespace ddl;

namespace {

Plan plan_on(std::vector<std::string> addresses) {
  Plan plan;
  for (const auto& address : addresses) plan.hosts.push_back(Host{address, address, 1, {}, "list"});
  plan.world_size = static_cast<int>(addresses.size());
  return plan;
}

} // namespace

TEST_CASE("rendezvous address: auto is loopback when the ranks are local", "[rendezvous]") {
  JobSpec job;
  CHECK(rendezvous::bind_address(job, plan_on({"localhost"}), true).value_or("") == "127.0.0.1");
  CHECK(rendezvous::bind_address(job, plan_on({"198.18.7.9"}), true).value_or("") == "127.0.0.1");
  CHECK(rendezvous::bind_address(job, plan_on({"127.0.0.2", "::1"}), false).value_or("") == "127.0.0.1");
}

TEST_CASE("rendezvous address: explicit loopback with a remote host is refused", "[rendezvous]") {
  JobSpec job;
  job.rendezvous.address = "127.0.0.1";
  auto refused = rendezvous::bind_address(job, plan_on({"127.0.0.1", "198.18.7.9"}), false);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ExitCode::usage);
  CHECK(refused.error().message ==
        "[rendezvous] address 127.0.0.1 is a loopback address, but host 198.18.7.9 (198.18.7.9) "
        "is remote: its workers could not reach the rendezvous");
  job.rendezvous.address = "198.18.7.1";
  CHECK(rendezvous::bind_address(job, plan_on({"198.18.7.9"}), false).value_or("") == "198.18.7.1");
}

TEST_CASE("rendezvous address: loopback detection", "[rendezvous]") {
  CHECK(rendezvous::is_loopback("127.0.0.1"));
  CHECK(rendezvous::is_loopback("127.3.0.1"));
  CHECK(rendezvous::is_loopback("::1"));
  CHECK(rendezvous::is_loopback("localhost"));
  CHECK_FALSE(rendezvous::is_loopback("198.18.0.1"));
}
