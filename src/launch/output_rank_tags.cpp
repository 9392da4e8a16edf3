// SPDX-License-Identifier: MIT
#include "src/launch/output_rank_tags.hpp"

#include <charconv>
#include <optional>

namespace ddl {

namespace {

// "[R] text": R and where the text starts; nullopt without such a tag.
std::optional<std::pair<int, std::size_t>> rank_tag(std::string_view text) {
  if (!text.starts_with('[')) {
    return std::nullopt;
  }
  int rank = -1;
  const char* digits = text.data() + 1;
  auto [end, error] = std::from_chars(digits, text.data() + text.size(), rank);
  std::size_t close = static_cast<std::size_t>(end - text.data());
  if (error != std::errc() || end == digits || text.substr(close, 2) != "] ") {
    return std::nullopt;
  }
  return std::pair{rank, close + 2};
}

} // namespace

RankTagRouter::RankTagRouter(const std::vector<int>& host_ranks) {
  int first = 0;
  for (int count : host_ranks) {
    first_.push_back(first);
    first += count;
  }
  if (!first_.empty()) {
    first_.push_back(first);
  }
}

RankTagRouter::Routed RankTagRouter::route(int host, Stream stream, std::string_view text, LineEnd end) {
  const auto h = static_cast<std::size_t>(host);
  Routed routed{first_.at(h), text};
  auto continuing = continuing_.find({host, stream});
  if (continuing != continuing_.end()) {
    routed.rank = continuing->second;
    continuing_.erase(continuing);
  } else if (auto tag = rank_tag(text); tag && tag->first >= first_[h] && tag->first < first_[h + 1]) {
    routed = {tag->first, text.substr(tag->second)};
  }
  if (end != LineEnd::newline) {
    continuing_[{host, stream}] = routed.rank;
  }
  return routed;
}

} // namespace ddl
