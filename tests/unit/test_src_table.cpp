// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/util/table.hpp"

using ddl::align_columns;

TEST_CASE("align_columns", "[table]") {
  SECTION("pads every column but the last to its widest cell, two spaces apart") {
    CHECK(align_columns({{"NAME", "SLOTS", "SOURCE"}, {"node-a", "2", "list"}, {"b", "16", "hostfile"}}) ==
          "NAME    SLOTS  SOURCE\n"
          "node-a  2      list\n"
          "b       16     hostfile\n");
  }
  SECTION("a shorter row ends at its own last cell") {
    CHECK(align_columns({{"A", "B", "C"}, {"long", "x"}}) == "A     B  C\nlong  x\n");
  }
  SECTION("a control byte in a cell is escaped: a row stays one line") {
    CHECK(align_columns({{"A", "B"}, {"x\ny", "\x1b[31mred"}}) == "A     B\nx\\ny  \\e[31mred\n");
  }
  SECTION("no rows, no text") {
    CHECK(align_columns({}).empty());
  }
}
