// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

// A set of ranks written as "0,3-4" (--output-ranks): numbers and inclusive
// ranges, comma separated. Empty: every rank.
struct RankList {
  std::vector<std::pair<int, int>> ranges;  // inclusive, in the order written

  bool empty() const { return ranges.empty(); }
  bool contains(int rank) const;
  // The highest rank named; -1 when empty.
  int highest() const;
};

// Parses "0,3-4". nullopt and `problem` set when it is not such a list.
std::optional<RankList> parse_rank_list(std::string_view text, std::string& problem);

// "0-3,5": sorted ranks written back with runs folded (for headers).
std::string compress_ranks(const std::vector<int>& sorted_ranks);

} // namespace ddl
