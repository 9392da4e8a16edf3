// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/util/text.hpp"

TEST_CASE("did_you_mean", "[text]") {
  std::vector<std::string> words = {"run", "render", "hosts"};
  SECTION("finds a near miss") { CHECK(ddl::did_you_mean("rnu", words) == "run"); }
  SECTION("gives nothing for a far word") { CHECK(ddl::did_you_mean("xyzzyq", words).empty()); }
}

TEST_CASE("shell_quote", "[text]") {
  CHECK(ddl::shell_quote("a b") == "'a b'");
  CHECK(ddl::shell_quote("it's") == "'it'\\''s'");
  CHECK(ddl::shell_quote("") == "''");
}

TEST_CASE("parse_int", "[text]") {
  CHECK(ddl::parse_int("42") == 42);
  CHECK_FALSE(ddl::parse_int("-1").has_value());
  CHECK_FALSE(ddl::parse_int("4x").has_value());
  CHECK_FALSE(ddl::parse_int("").has_value());
}
