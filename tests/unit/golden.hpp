// SPDX-License-Identifier: MIT
// Golden-file comparison for renderer tests. DDL_UPDATE_GOLDEN=1 rewrites the
// files under tests/fixtures/golden/ instead of comparing (review the diff).
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ddl::test {

inline void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(DDL_FIXTURES) + "/golden/" + name;
  if (std::getenv("DDL_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  INFO("golden file " << path);
  REQUIRE(in.good());
  std::stringstream expected;
  expected << in.rdbuf();
  CHECK(actual == expected.str());
}

} // namespace ddl::test
