// SPDX-License-Identifier: MIT
#pragma once

// `ddl worker preflight`: one host of the preflight gate's network check
// (issue 43). Each rank is one host; for every pair it is part of, round by
// round (preflight_rounds; --sequential: in the order given), it measures the round trip (small pings) and each
// direction's bandwidth (a bounded stream), and publishes what it saw in the
// rendezvous for the launcher to judge. No barrier: a host that does not
// answer delays only its own pairs, which end at the budget as failures.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/duration.hpp"
#include "src/util/error.hpp"

namespace ddl::coll {

// rank R publishes "ADDRESS:PORT:COOKIE" under k_preflight_address_key + R,
// then its figures under k_preflight_figures_key + R (see PreflightLine).
inline constexpr std::string_view k_preflight_address_key = "ddl/preflight/address/";
inline constexpr std::string_view k_preflight_figures_key = "ddl/preflight/figures/";
// Sequential: pair K starts once K-1's dialer set k_preflight_turn_key + K.
inline constexpr std::string_view k_preflight_turn_key = "ddl/preflight/turn/";

// One pair of check ranks: `a` dials `b` and measures the round trip.
struct PreflightPair {
  int a = 0;
  int b = 0;
  bool operator==(const PreflightPair&) const = default;
};

// Each pair's round (0 first): rounds of pairs that share no host, each
// pair in the first round its hosts are free in, in the list's order. The
// workers measure round by round, so that a round's pairs run at once; in
// the list's own order the ring's pairs would wait for each other around the
// ring (1-2 after 0-1, 2-3 after 1-2).
std::vector<std::size_t> preflight_rounds(const std::vector<PreflightPair>& pairs);

// "0-1,1-2,2-0" (the option's text), and back.
Result<std::vector<PreflightPair>> parse_preflight_pairs(std::string_view text);
std::string format_preflight_pairs(const std::vector<PreflightPair>& pairs);

// One line of a rank's figures: what it measured of one pair. The dialing
// end knows the round trip; each end knows what it received.
struct PreflightLine {
  PreflightPair pair;
  bool failed = false;
  double latency_ms = -1;   // the dialer's: the fastest round trip; -1 on the other end
  double received_gbps = 0; // the bandwidth this end received from the other
  std::string why;          // failed: what went wrong ("no answer within 3 s")
};
std::string format_preflight_line(const PreflightLine& line);
std::optional<PreflightLine> parse_preflight_line(std::string_view text);

struct PreflightWorkerOptions {
  std::vector<PreflightPair> pairs;  // every rank takes its own in this order
  Millis window{50};                 // each direction's stream
  Millis budget{3'000};              // the whole check, from the worker's start
  // One pair at a time over all hosts (each waits for the one before it, a
  // bounded while): the pairs then do not share this machine's CPU.
  bool sequential = false;
};

// What the worker needs of the rendezvous.
struct PreflightLinks {
  int rank = 0;
  std::string rendezvous_host;  // the check listens on the address routing there
  std::function<Result<void>(const std::string& key, const std::string& value)> publish;
  std::function<Result<std::string>(const std::string& key, Millis timeout)> wait_for;
};

// Measures this rank's pairs; 0 when every figure was published (a pair
// that failed is a figure too), else the error.
Result<int> run_preflight_worker(const PreflightWorkerOptions& options, const PreflightLinks& links);

} // namespace ddl::coll
