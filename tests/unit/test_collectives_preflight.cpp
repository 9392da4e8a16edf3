// SPDX-License-Identifier: MIT
// The preflight check's worker (issue 43): the rounds in which it takes its
// pairs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "src/collectives/preflight_worker.hpp"
#include "src/launch/preflight_verdict.hpp"

TEST_CASE("preflight: the workers take their pairs in rounds of pairs that share no host", "[preflight]") {
  for (std::size_t n : {std::size_t{3}, std::size_t{4}, std::size_t{16}}) {
    std::vector<ddl::coll::PreflightPair> pairs;
    for (auto [a, b] : ddl::preflight_pairs(n)) {
      pairs.push_back({static_cast<int>(a), static_cast<int>(b)});
    }
    const auto rounds = ddl::coll::preflight_rounds(pairs);
    REQUIRE(rounds.size() == pairs.size());
    const std::size_t count = *std::max_element(rounds.begin(), rounds.end()) + 1;
    for (std::size_t round = 0; round < count; ++round) {
      std::vector<int> busy;
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        if (rounds[i] != round) continue;
        CHECK(std::find(busy.begin(), busy.end(), pairs[i].a) == busy.end());
        CHECK(std::find(busy.begin(), busy.end(), pairs[i].b) == busy.end());
        busy.push_back(pairs[i].a);
        busy.push_back(pairs[i].b);
      }
      CHECK_FALSE(busy.empty());
    }
    // 16 hosts: 32 pairs, 4 per host, in 4 or 5 rounds (in the list's order the ring's
    // 16 pairs would run one after the other).
    CHECK(count <= (n == 16 ? 5u : 3u));
  }
}
