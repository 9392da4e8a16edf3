// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/util/error.hpp"

namespace {
ddl::Result<int> half(int n) {
  if (n % 2 != 0) {
    return ddl::fail(ddl::ExitCode::usage, "odd");
  }
  return n / 2;
}
ddl::Result<void> check(bool ok) {
  if (!ok) {
    return ddl::fail(ddl::ExitCode::launch, "no");
  }
  return {};
}
} // namespace

TEST_CASE("Result", "[error]") {
  SECTION("holds a value") {
    auto r = half(4);
    REQUIRE(r);
    CHECK(*r == 2);
  }
  SECTION("holds an error with its exit code") {
    auto r = half(3);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "odd");
    CHECK(r.error().code == ddl::ExitCode::usage);
  }
  SECTION("void") {
    CHECK(check(true).has_value());
    CHECK(check(false).error().code == ddl::ExitCode::launch);
  }
}
