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

// The address workers are told to dial, or "" on an error.
std::string advertised(const JobSpec& job, const Plan& plan, bool ranks_are_local) {
  auto address = rendezvous::rendezvous_address(job, plan, ranks_are_local);
  return address ? address->advertise : "";
}

} // namespace

TEST_CASE("rendezvous address: auto is loopback when the ranks are local", "[rendezvous]") {
  JobSpec job;
  CHECK(advertised(job, plan_on({"localhost"}), true) == "127.0.0.1");
  CHECK(advertised(job, plan_on({"198.18.7.9"}), true) == "127.0.0.1");
  CHECK(advertised(job, plan_on({"127.0.0.2", "::1"}), false) == "127.0.0.1");
}

TEST_CASE("rendezvous address: explicit loopback with a remote host is refused", "[rendezvous]") {
  JobSpec job;
  job.rendezvous.address = "127.0.0.1";
  auto refused = rendezvous::rendezvous_address(job, plan_on({"127.0.0.1", "198.18.7.9"}), false);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ExitCode::usage);
  CHECK(refused.error().message ==
        "[rendezvous] address 127.0.0.1 is a loopback address, but host 198.18.7.9 (198.18.7.9) "
        "is remote: its workers could not reach the rendezvous");
  job.rendezvous.address = "198.18.7.1";
  CHECK(advertised(job, plan_on({"198.18.7.9"}), false) == "198.18.7.1");
}

TEST_CASE("rendezvous address: a wildcard listens everywhere, workers dial the routed address",
          "[rendezvous]") {
  JobSpec job;
  for (const char* wildcard : {"0.0.0.0", "::"}) {
    job.rendezvous.address = wildcard;
    auto local = rendezvous::rendezvous_address(job, plan_on({"localhost"}), true);
    REQUIRE(local);
    CHECK(local->bind == wildcard);
    CHECK(local->advertise == "127.0.0.1");
  }
  job.rendezvous.address = "0.0.0.0";
  auto remote = rendezvous::rendezvous_address(job, plan_on({"127.0.0.5"}), false);
  REQUIRE(remote);
  CHECK(remote->bind == "0.0.0.0");
  CHECK(remote->advertise == "127.0.0.1");
}

TEST_CASE("rendezvous address: loopback detection", "[rendezvous]") {
  CHECK(rendezvous::is_loopback("127.0.0.1"));
  CHECK(rendezvous::is_loopback("127.3.0.1"));
  CHECK(rendezvous::is_loopback("::1"));
  CHECK(rendezvous::is_loopback("localhost"));
  CHECK_FALSE(rendezvous::is_loopback("198.18.0.1"));
}
