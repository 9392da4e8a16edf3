// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/inventory/inventory.hpp"

using namespace ddl;

namespace {

std::vector<HostSpec> parsed(std::string_view text) {
  auto hosts = parse_hostfile(text, "hf");
  INFO((hosts ? std::string() : hosts.error().message));
  REQUIRE(hosts);
  return *hosts;
}

std::string error_of(std::string_view text) {
  auto hosts = parse_hostfile(text, "hf");
  REQUIRE_FALSE(hosts);
  CHECK(hosts.error().code == ExitCode::usage);
  return hosts.error().message;
}

} // namespace

TEST_CASE("parse_hostfile: OpenMPI and DeepSpeed form", "[hostfile]") {
  auto hosts = parsed("# cluster\n\nnode0 slots=4 max_slots=8\n  node1   slots=2  # two\nnode2\n");
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].name == "node0");
  CHECK(hosts[0].slots == 4);
  CHECK(hosts[1].name == "node1");
  CHECK(hosts[1].slots == 2);
  CHECK(hosts[2].name == "node2");
  CHECK_FALSE(hosts[2].slots.has_value());
}

TEST_CASE("parse_hostfile: the OpenMPI v4.1 token variants", "[hostfile]") {
  auto hosts = parsed("a count=2\nb cpu=3\nc slots = 5 slots-max=9\nd slots=1 max-slots=2 cpu_max=4\n");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0].slots == 2);
  CHECK(hosts[1].slots == 3);
  CHECK(hosts[2].slots == 5);
  CHECK(hosts[3].slots == 1);
}

TEST_CASE("parse_hostfile: MPICH form", "[hostfile]") {
  auto hosts = parsed("a:2\r\nb\n[fe80::1]:3\n10.0.0.7:1\n");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0].slots == 2);
  CHECK_FALSE(hosts[1].slots.has_value());
  CHECK(hosts[2].name == "fe80::1");
  CHECK(hosts[2].slots == 3);
  CHECK(hosts[3].name == "10.0.0.7");
}

TEST_CASE("parse_hostfile: errors name origin:LINE, all at once", "[hostfile]") {
  CHECK(error_of("a slots=2\nb\na slots=1\n") == "hf:3: host 'a' is listed twice (first on line 1)");
  CHECK(error_of("a slots=0\n") ==
        "hf:1: bad slot count '0': expected a whole number from 1 to 1000000");
  CHECK(error_of("a:x\n") == "hf:1: bad slot count 'x': expected a whole number from 1 to 1000000");
  CHECK(error_of("a slot=2\n") == "hf:1: unknown key 'slot'; did you mean 'slots'?");
  CHECK(error_of("a slots=2 slots=3\n") == "hf:1: slots given twice");
  CHECK(error_of("a 4\n") == "hf:1: unexpected '4'; expected KEY=VALUE such as slots=4");
  CHECK(error_of("-oProxyCommand=x\n").starts_with("hf:1: bad host name '-oProxyCommand=x': "));
  CHECK(error_of("# nothing\n\n") == "hf: no hosts in the hostfile");
  CHECK(error_of("a slots=-1\nb\nb\n") ==
        "hf:1: bad slot count '-1': expected a whole number from 1 to 1000000\n"
        "hf:3: host 'b' is listed twice (first on line 2)");
}
