// SPDX-License-Identifier: MIT
// The preflight gate's judgement (issue 43): a slow host told from a slow
// link, thresholds relative to the job's own median.
#include <catch2/catch.hpp>

#include "src/launch/preflight_verdict.hpp"

namespace {

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("198.18.0." + std::to_string(i + 1));
  return out;
}

// Every pair of preflight_pairs(n) at 1.9 GB/s and 0.2 ms, except `slow`'s.
std::vector<ddl::PairFigure> figures(std::size_t n, const std::function<bool(std::size_t, std::size_t)>& slow) {
  std::vector<ddl::PairFigure> out;
  for (auto [a, b] : ddl::preflight_pairs(n)) {
    bool ring = b == (a + 1) % n;
    out.push_back({a, b, slow(a, b) ? 0.11 : 1.9, slow(a, b) ? 9.0 : 0.2, ring, {}, {}});
  }
  return out;
}

// `host` said nothing of its pairs that `which` picks, as the gate marks them.
void silence(std::vector<ddl::PairFigure>& pairs, std::size_t host, const std::string& budget,
             const std::function<bool(const ddl::PairFigure&)>& which) {
  for (auto& pair : pairs) {
    if ((pair.a == host || pair.b == host) && which(pair)) {
      pair.failed = names(host + 1)[host] + " did not answer the check within " + budget;
      pair.silent = host;
    }
  }
}

} // namespace

TEST_CASE("preflight pairs: ring neighbours, then pairs two apart from 4 hosts", "[preflight]") {
  CHECK(ddl::preflight_pairs(1).empty());
  CHECK(ddl::preflight_pairs(2).size() == 1);
  CHECK(ddl::preflight_pairs(3).size() == 3);
  CHECK(ddl::preflight_pairs(4).size() == 6);
  CHECK(ddl::preflight_pairs(16).size() == 32);
}

TEST_CASE("preflight: no fault, nothing named", "[preflight]") {
  for (std::size_t n : {std::size_t{2}, std::size_t{3}, std::size_t{4}, std::size_t{16}}) {
    auto v = ddl::judge_preflight(names(n), figures(n, [](auto, auto) { return false; }), 0.5, 4.0);
    CHECK(v.findings.empty());
    CHECK(v.median_gbps == Approx(1.9));
  }
}

TEST_CASE("preflight: a slow host is named with its worst peer and the median", "[preflight]") {
  for (std::size_t n : {std::size_t{3}, std::size_t{4}, std::size_t{16}}) {
    auto v = ddl::judge_preflight(names(n), figures(n, [](auto a, auto b) { return a == 2 || b == 2; }), 0.5, 4.0);
    REQUIRE(v.findings.size() == 1);
    CHECK_FALSE(v.findings[0].is_link);
    CHECK(v.findings[0].host == 2);
    CHECK_THAT(v.findings[0].why, Catch::StartsWith("198.18.0.3: 0.11 GB/s to 198.18.0."));
    CHECK_THAT(v.findings[0].why, Catch::Contains("against a median of 1.9 GB/s"));
  }
}

TEST_CASE("preflight: a slow link between two fine hosts is named as a link", "[preflight]") {
  auto v = ddl::judge_preflight(names(16), figures(16, [](auto a, auto b) { return a == 4 && b == 5; }), 0.5, 4.0);
  REQUIRE(v.findings.size() == 1);
  CHECK(v.findings[0].is_link);
  CHECK(v.findings[0].why ==
        "link 198.18.0.5 - 198.18.0.6: 0.11 GB/s to 198.18.0.6 against a median of 1.9 GB/s (ring neighbour); "
        "both hosts fine with their other peers");
}

TEST_CASE("preflight: latency alone above the factor fails", "[preflight]") {
  auto pairs = figures(4, [](auto, auto) { return false; });
  for (auto& pair : pairs) {
    if (pair.a == 1 || pair.b == 1) pair.latency_ms = 5.0;
  }
  auto v = ddl::judge_preflight(names(4), pairs, 0.5, 4.0);
  REQUIRE(v.findings.size() == 1);
  CHECK(v.findings[0].host == 1);
  CHECK_THAT(v.findings[0].why, Catch::Contains("5 ms to 198.18.0."));
  CHECK_THAT(v.findings[0].why, Catch::Contains("against a median of 0.2 ms"));
}

TEST_CASE("preflight: a host that never answered is named so", "[preflight]") {
  auto pairs = figures(4, [](auto, auto) { return false; });
  silence(pairs, 3, "3s", [](const auto&) { return true; });
  auto v = ddl::judge_preflight(names(4), pairs, 0.5, 4.0);
  REQUIRE(v.findings.size() == 1);
  CHECK_FALSE(v.findings[0].is_link);
  CHECK(v.findings[0].host == 3);
  CHECK(v.findings[0].why == "198.18.0.4 did not answer the check within 3s");
  CHECK(v.median_gbps == Approx(1.9));
}

TEST_CASE("preflight: a second measurement is judged against the first one's medians", "[preflight]") {
  // The slow pairs measured again, alone, came out at 4 GB/s: had they set the
  // median, the pair that was not measured again (0.81 GB/s, at ease against
  // the first measurement's 2.5) would be named without a second look.
  auto pairs = figures(16, [](auto, auto) { return false; });
  for (auto& pair : pairs) {
    pair.gbps = (pair.a == 8 && pair.b == 9) ? 0.81 : 4.0;
  }
  CHECK(ddl::judge_preflight(names(16), pairs, 0.25, 4.0).findings.size() == 1);
  auto v = ddl::judge_preflight(names(16), pairs, ddl::PreflightMedians{2.5, 0.2}, 0.25, 4.0);
  CHECK(v.findings.empty());
  CHECK(v.median_gbps == Approx(2.5));
  CHECK(ddl::preflight_medians(16, pairs).gbps == Approx(4.0));
}

TEST_CASE("preflight: a host silent on some of its pairs is at fault, not its links", "[preflight]") {
  // Stopped after its first two pairs (the ring's): its two extra pairs say it did not answer.
  auto pairs = figures(16, [](auto, auto) { return false; });
  silence(pairs, 5, "5s", [](const auto& pair) { return !pair.ring; });
  auto v = ddl::judge_preflight(names(16), pairs, 0.5, 4.0);
  REQUIRE(v.findings.size() == 1);
  CHECK_FALSE(v.findings[0].is_link);
  CHECK(v.findings[0].host == 5);
  CHECK(v.findings[0].why == "198.18.0.6 did not answer the check within 5s");
}
