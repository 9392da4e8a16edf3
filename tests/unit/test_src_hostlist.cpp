// SPDX-License-Identifier: MIT
// Slurm-style hostlist expansion.
#include <catch2/catch.hpp>

#include "src/inventory/inventory.hpp"

namespace {

// "name" or "name:slots" per host, joined by spaces; or the error message.
std::string expand(std::string_view text) {
  auto hosts = ddl::expand_hostlist(text);
  if (!hosts) {
    CHECK(hosts.error().code == ddl::ExitCode::usage);
    return "error: " + hosts.error().message;
  }
  std::string out;
  for (const auto& host : *hosts) {
    out += (out.empty() ? "" : " ") + host.name;
    if (host.slots) {
      out += ":" + std::to_string(*host.slots);
    }
  }
  return out;
}

} // namespace

TEST_CASE("hostlist expansion", "[hostlist]") {
  CHECK(expand("a") == "a");
  CHECK(expand("a,b:2, c:3") == "a b:2 c:3");
  CHECK(expand("node[01-04,07]") == "node01 node02 node03 node04 node07");
  CHECK(expand("node[01-04]:8,gpu-a:4") == "node01:8 node02:8 node03:8 node04:8 gpu-a:4");
  CHECK(expand("n[8-11]") == "n8 n9 n10 n11");
  CHECK(expand("n[08-11]") == "n08 n09 n10 n11");
  CHECK(expand("n[098-101]") == "n098 n099 n100 n101");
  CHECK(expand("gpu[1-2]-ib") == "gpu1-ib gpu2-ib");
  CHECK(expand("r[1-2]n[1-2]") == "r1n1 r1n2 r2n1 r2n2");
  CHECK(expand("r[1-2]n[1-2]:4") == "r1n1:4 r1n2:4 r2n1:4 r2n2:4");
  CHECK(expand("[1-2]x") == "1x 2x");
  CHECK(expand("n[5]") == "n5");
  CHECK(expand("10.0.0.1:2") == "10.0.0.1:2");
}

TEST_CASE("hostlist IPv6", "[hostlist]") {
  CHECK(expand("[fe80::1]:2") == "fe80::1:2");
  CHECK(expand("[fe80::1]") == "fe80::1");
  CHECK(expand("[::1]:2,[fe80::2]") == "::1:2 fe80::2");
  // Without brackets an address with two or more colons has no slots.
  CHECK(expand("fe80::1") == "fe80::1");
  CHECK(expand("::1") == "::1");
  CHECK(expand("fe80::1%eth0") == "fe80::1%eth0");
  // Two numbers after a name: a port, then the slots (see "hostlist logins").
  CHECK(expand("node:2:3") == "node:3");
  CHECK(expand("node-a:2:3") == "node-a:3");
  CHECK(expand("node-a:2:3:4") == "error: bad host 'node-a:2:3:4': write an IPv6 address with slots as "
                               "[ADDRESS]:SLOTS");
  CHECK(expand("[fe80::1]x") == "error: unexpected 'x' after ']' in '[fe80::1]x'");
  CHECK(expand("[fe80::1]:0") == "error: bad slot count '0' in '[fe80::1]:0'");
  // Inside brackets only an address: it is written back bare where it has no slots (fuzz find).
  CHECK(expand("[fe80::1s:2m]") == "error: bad IPv6 address 'fe80::1s:2m' in '[fe80::1s:2m]'");
  CHECK(expand("[fe80::1%eth0]:2") == "fe80::1%eth0:2");
}

TEST_CASE("hostlist errors name the offending text", "[hostlist]") {
  CHECK(expand("") == "error: empty host list");
  CHECK(expand("  ") == "error: empty host list");
  CHECK(expand("a,,b") == "error: empty host in 'a,,b'");
  CHECK(expand("a,") == "error: empty host in 'a,'");
  CHECK(expand(",a") == "error: empty host in ',a'");
  CHECK(expand("node[1-3") == "error: '[' without ']' in 'node[1-3'");
  CHECK(expand("node[1-3,5") == "error: '[' without ']' in 'node[1-3,5'");
  CHECK(expand("[fe80::1") == "error: '[' without ']' in '[fe80::1'");
  CHECK(expand("node1]") == "error: ']' without '[' in 'node1]'");
  CHECK(expand("n[1[2]]") == "error: nested '[' in 'n[1[2]]'");
  CHECK(expand("node[5-1]") == "error: reversed range '5-1' in 'node[5-1]'");
  CHECK(expand("node[a-b]") == "error: bad range 'a-b' in 'node[a-b]'");
  CHECK(expand("node[1-]") == "error: bad range '1-' in 'node[1-]'");
  CHECK(expand("node[-1]") == "error: bad range '-1' in 'node[-1]'");
  CHECK(expand("node[1,,2]") == "error: bad range '' in 'node[1,,2]'");
  CHECK(expand("node[]") == "error: empty brackets in 'node[]'");
  CHECK(expand("node[1-65537]") == "error: 'node[1-65537]' expands to more than 65536 hosts");
  CHECK(expand("r[1-300]n[1-300]") == "error: 'r[1-300]n[1-300]' expands to more than 65536 hosts");
  CHECK(expand("n[1-9999999999]") == "error: bad range '1-9999999999' in 'n[1-9999999999]'");
  CHECK(expand("a:x") == "error: bad slot count 'x' in 'a:x'");
  CHECK(expand("a:0") == "error: bad slot count '0' in 'a:0'");
  CHECK(expand("a:-1") == "error: bad slot count '-1' in 'a:-1'");
  CHECK(expand("a:") == "error: bad slot count '' in 'a:'");
  CHECK(expand(":4") == "error: empty host name in ':4'");
}

TEST_CASE("hostlist limits", "[hostlist]") {
  auto hosts = ddl::expand_hostlist("n[0-65535]");
  REQUIRE(hosts);
  CHECK(hosts->size() == 65536);
  CHECK(hosts->back().name == "n65535");
  CHECK(expand("n[1-40000],m[1-40000]") ==
        "error: 'n[1-40000],m[1-40000]' expands to more than 65536 hosts");
}

TEST_CASE("hostlist slot counts above ddl's limit are refused", "[hostlist]") {
  CHECK(expand("a:1000000").starts_with("a"));
  CHECK(expand("a:100000000") == "error: slot count '100000000' in 'a:100000000' is above ddl's limit of 1000000");
}

namespace {

// "user@name:port:slots" per host, the parts it has; or the error message.
std::string logins(std::string_view text) {
  auto hosts = ddl::expand_hostlist(text);
  if (!hosts) {
    return "error: " + hosts.error().message;
  }
  std::string out;
  for (const auto& host : *hosts) {
    out += (out.empty() ? "" : " ") + (host.user.empty() ? "" : host.user + "@") + host.name;
    out += host.port ? ":" + std::to_string(*host.port) : "";
    out += host.slots ? ":" + std::to_string(*host.slots) : "";
  }
  return out;
}

} // namespace

TEST_CASE("hostlist logins", "[hostlist]") {
  CHECK(logins("ml@a") == "ml@a");
  CHECK(logins("ml@a:4") == "ml@a:4");
  CHECK(logins("a:2222:4") == "a:2222:4");
  CHECK(logins("ml@node[1-2]:2222:8,b") == "ml@node1:2222:8 ml@node2:2222:8 b");
  CHECK(logins("op@[fe80::1]:22:1") == "op@fe80::1:22:1");
  CHECK(logins("[fe80::1]:2") == "fe80::1:2");
  CHECK(logins("fe80::1:2") == "fe80::1:2");  // an IPv6 address ("::"), no port
  CHECK(logins("a.b_c-d@h") == "a.b_c-d@h");
  CHECK(logins("a:0:2") == "error: bad port '0' in 'a:0:2': 1 to 65535");
  CHECK(logins("a:65536:2") == "error: bad port '65536' in 'a:65536:2': 1 to 65535");
  CHECK(logins("@a") == "error: an empty user before '@' in '@a'");
  CHECK(logins("-o@a") == "error: a user that starts with '-' in '-o@a'");
  CHECK(logins("m;l@a") == "error: a user with other than letters, digits, '.', '_' and '-' in 'm;l@a'");
}

TEST_CASE("format_host_spec writes a spec that expands back to it", "[hostlist]") {
  for (std::string_view text : {"gpu-a", "gpu-a:4", "ml@gpu-b:2222:2", "[fe80::1]:4", "fe80::1",
                                "ml@[fe80::1]:2222:8", "node1:8 gpu=a100 rack=r1", "ml@gpu-b"}) {
    auto specs = ddl::expand_hostlist(text);
    REQUIRE(specs);
    REQUIRE(specs->size() == 1);
    CHECK(ddl::format_host_spec(specs->front()) == text);
    auto again = ddl::expand_hostlist(ddl::format_host_spec(specs->front()));
    REQUIRE(again);
    CHECK(*again == *specs);
  }
  CHECK(ddl::format_login("ml", "fe80::1", 2222) == "ml@[fe80::1]:2222");
  CHECK(ddl::format_login("", "10.0.0.5", std::nullopt) == "10.0.0.5");
}
