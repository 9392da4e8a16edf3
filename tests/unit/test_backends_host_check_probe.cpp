// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "backends/host_check_probe.hpp"

using namespace ddl;

TEST_CASE("hosts --check reads the ddl version and GPU count the probe printed", "[host_check]") {
  HostCheck check = read_host_check("ddl_version=0.1.0\ngpu_count=8\n", 0, "/opt/ddl/bin/ddl");
  CHECK(check.ddl_version == "0.1.0");
  CHECK(check.gpu_count == 8);
  CHECK(check.error.empty());
  CHECK_FALSE(check.reachable);  // the caller's to say
}

TEST_CASE("hosts --check names a ddl missing where it was looked for", "[host_check]") {
  HostCheck check = read_host_check("ddl_missing=1\ngpu_count=0\n", 0, "/opt/ddl/bin/ddl");
  CHECK(check.ddl_version.empty());
  CHECK(check.gpu_count == 0);
  CHECK(check.error == "ddl not found at /opt/ddl/bin/ddl");
}

TEST_CASE("hosts --check reports a probe that failed with what it printed", "[host_check]") {
  HostCheck check = read_host_check("sh: 1: syntax error\n", 2, "ddl");
  CHECK_FALSE(check.gpu_count.has_value());
  CHECK(check.error == "the probe failed (exit 2): sh: 1: syntax error");
}

TEST_CASE("Only a gpu_count line gives a GPU count", "[host_check]") {
  CHECK(gpu_count_in("gpu_count=4") == 4);
  CHECK_FALSE(gpu_count_in("gpu_count=x").has_value());
  CHECK_FALSE(gpu_count_in("ddl_version=4").has_value());
}
