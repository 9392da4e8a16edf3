// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/util/rank_tag.hpp"

namespace rank_tag = ddl::rank_tag;

TEST_CASE("rank_tag: the worker's tags, written and read back", "[pmix][output]") {
  CHECK(rank_tag::tag(3) == "[3] ");
  CHECK(rank_tag::continued(12) == "[12+] ");
  auto whole = rank_tag::parse("[3] hello");
  REQUIRE(whole);
  CHECK((whole->rank == 3 && whole->text_at == 4 && !whole->continues));
  auto piece = rank_tag::parse(rank_tag::continued(12) + "more");
  REQUIRE(piece);
  CHECK((piece->rank == 12 && piece->text_at == 6 && piece->continues));
  for (const char* line : {"[3]no blank", "[] x", "[x] y", "3] z", "[3+]x", "[3++] x", ""}) {
    CHECK_FALSE(rank_tag::parse(line));
  }
}

TEST_CASE("rank_tag: the worker's verdict names the rank that failed first", "[pmix][output]") {
  CHECK(rank_tag::verdict_line("rank 1 exited with code 3") == "ddl: error: rank 1 exited with code 3");
  CHECK(rank_tag::blamed_rank(rank_tag::verdict_line("rank 1 exited with code 3")) == 1);
  CHECK(rank_tag::blamed_rank("ddl: error: rank 20 called MPI_Abort with status 7") == 20);
  CHECK_FALSE(rank_tag::blamed_rank("ddl: error: the fence exchange failed"));
  CHECK_FALSE(rank_tag::blamed_rank("ddl: error: rank x exited"));
  CHECK_FALSE(rank_tag::blamed_rank("ddl: error: rank 3"));
  CHECK_FALSE(rank_tag::blamed_rank("[1] ddl: error: rank 1 exited with code 3"));
}
