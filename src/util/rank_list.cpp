// SPDX-License-Identifier: MIT
#include "src/util/rank_list.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl {

namespace {

// Ranks above this are refused: ddl never runs that many (k_max_world_size).
constexpr long long k_highest_rank = 1'000'000;

std::optional<int> parse_rank(std::string_view word, std::string& problem) {
  auto value = parse_int(trim(word));
  if (!value || *value > k_highest_rank) {
    problem = fmt::format("'{}' is not a rank (a number from 0)", trim(word));
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

} // namespace

bool RankList::contains(int rank) const {
  return std::ranges::any_of(ranges, [rank](const auto& range) { return rank >= range.first && rank <= range.second; });
}

int RankList::highest() const {
  int highest = -1;
  for (const auto& range : ranges) {
    highest = std::max(highest, range.second);
  }
  return highest;
}

std::optional<RankList> parse_rank_list(std::string_view text, std::string& problem) {
  RankList list;
  if (trim(text).empty()) {
    problem = "names no rank (write e.g. 0,3-4)";
    return std::nullopt;
  }
  for (const std::string& item : split(text, ',')) {
    std::string_view word = trim(item);
    std::size_t dash = word.find('-');
    auto first = parse_rank(word.substr(0, dash), problem);
    if (!first) {
      return std::nullopt;
    }
    int last = *first;
    if (dash != std::string_view::npos) {
      auto end = parse_rank(word.substr(dash + 1), problem);
      if (!end) {
        return std::nullopt;
      }
      if (*end < *first) {
        problem = fmt::format("'{}' runs backwards", word);
        return std::nullopt;
      }
      last = *end;
    }
    list.ranges.emplace_back(*first, last);
  }
  return list;
}

std::string compress_ranks(const std::vector<int>& sorted_ranks) {
  std::string text;
  for (std::size_t i = 0; i < sorted_ranks.size();) {
    std::size_t j = i;
    while (j + 1 < sorted_ranks.size() && sorted_ranks[j + 1] == sorted_ranks[j] + 1) {
      ++j;
    }
    text += text.empty() ? "" : ",";
    text += j == i ? fmt::format("{}", sorted_ranks[i]) : fmt::format("{}-{}", sorted_ranks[i], sorted_ranks[j]);
    i = j + 1;
  }
  return text;
}

} // namespace ddl
