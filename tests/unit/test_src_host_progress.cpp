// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/util/host_progress.hpp"

TEST_CASE("host progress names the hosts done and the slowest in work", "[host_progress]") {
  ddl::HostProgress progress("connected", {"h1", "h2", "h3"});
  CHECK(progress.text() == "ddl: connected 0/3");
  progress.begin(1);
  progress.begin(0);
  CHECK(progress.text().starts_with("ddl: connected 0/3, slowest h2 ("));
  progress.end(1);
  CHECK(progress.text().starts_with("ddl: connected 1/3, slowest h1 ("));
  progress.end(0);
  progress.end(7);  // not a host: ignored
  CHECK(progress.text() == "ddl: connected 2/3");
}
