// SPDX-License-Identifier: MIT
#include "src/launch/output_rank_tags.hpp"

#include <charconv>
#include <optional>

namespace ddl {

namespace {

struct RankTag {
  int rank = -1;
  std::size_t text_at = 0;  // where the text after the tag starts
  bool continues = false;   // "[R+] ": a piece of a longer line
};

// "[R] text" or "[R+] text"; nullopt without such a tag.
std::optional<RankTag> rank_tag(std::string_view text) {
  if (!text.starts_with('[')) {
    return std::nullopt;
  }
  RankTag tag;
  const char* digits = text.data() + 1;
  auto [end, error] = std::from_chars(digits, text.data() + text.size(), tag.rank);
  std::size_t close = static_cast<std::size_t>(end - text.data());
  tag.continues = text.substr(close, 1) == "+";
  close += tag.continues ? 1 : 0;
  if (error != std::errc() || end == digits || text.substr(close, 2) != "] ") {
    return std::nullopt;
  }
  tag.text_at = close + 2;
  return tag;
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
  } else if (auto tag = rank_tag(text); tag && tag->rank >= first_[h] && tag->rank < first_[h + 1]) {
    routed = {tag->rank, text.substr(tag->text_at), tag->continues};
  }
  if (end != LineEnd::newline) {
    continuing_[{host, stream}] = routed.rank;
  }
  return routed;
}

} // namespace ddl
