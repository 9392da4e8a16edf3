// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <fmt/core.h>

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

// The contract between `ddl worker pmix-host` and the ddl that reads its
// lines: every line the worker writes is read back as written, and a worker
// asked for another version refuses, naming both, instead of writing lines
// that ddl would misread.
TEST_CASE("rank_tag: the lines' contract, version 1, round trip", "[pmix][output][contract]") {
  REQUIRE(rank_tag::k_version == 1);
  REQUIRE(rank_tag::check_version(rank_tag::k_version));
  for (int rank : {0, 7, 1023}) {
    const std::string text = "loss 0.5 [not a tag] ddl: error: rank 9 x";
    auto whole = rank_tag::parse(rank_tag::tag(rank) + text);
    REQUIRE(whole);
    CHECK((whole->rank == rank && !whole->continues && (rank_tag::tag(rank) + text).substr(whole->text_at) == text));
    auto piece = rank_tag::parse(rank_tag::continued(rank) + text);
    REQUIRE(piece);
    CHECK((piece->rank == rank && piece->continues && (rank_tag::continued(rank) + text).substr(piece->text_at) == text));
    CHECK(rank_tag::blamed_rank(rank_tag::verdict_line(fmt::format("rank {} exited with code 3", rank))) == rank);
  }
}

TEST_CASE("rank_tag: a worker asked for another version of the lines names both", "[pmix][output][contract]") {
  auto newer = rank_tag::check_version(rank_tag::k_version + 1);
  REQUIRE_FALSE(newer);
  CHECK(newer.error().code == ddl::ExitCode::launch);
  CHECK(newer.error().message ==
        "ddl reads the lines of `ddl worker pmix-host` of version 2, this worker writes version 1 (the host's ddl "
        "is another release: install the same ddl on every host)");
}
