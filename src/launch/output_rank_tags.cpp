// SPDX-License-Identifier: MIT
#include "src/launch/output_rank_tags.hpp"

#include "src/util/rank_tag.hpp"

namespace ddl {

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
  } else if (auto tag = rank_tag::parse(text); tag && tag->rank >= first_[h] && tag->rank < first_[h + 1]) {
    routed = {tag->rank, text.substr(tag->text_at), tag->continues};
  } else if (auto blamed = rank_tag::blamed_rank(text);
             blamed && *blamed >= first_[h] && *blamed < first_[h + 1] && !blamed_.contains(host)) {
    blamed_[host] = *blamed;
  }
  if (end != LineEnd::newline) {
    continuing_[{host, stream}] = routed.rank;
  }
  return routed;
}

std::optional<int> RankTagRouter::blamed(int host) const {
  auto found = blamed_.find(host);
  return found == blamed_.end() ? std::nullopt : std::optional<int>(found->second);
}

std::vector<std::string> RankTagRouter::lines_of(int rank, const std::deque<std::string>& host_lines) {
  std::vector<std::string> lines;
  for (const auto& line : host_lines) {
    if (auto tag = rank_tag::parse(line); tag && tag->rank == rank) {
      lines.push_back(line.substr(tag->text_at));
    }
  }
  return lines;
}

} // namespace ddl
