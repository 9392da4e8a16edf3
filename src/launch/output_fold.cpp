// SPDX-License-Identifier: MIT
#include "src/launch/output_fold.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "src/util/rank_list.hpp"

namespace ddl {

namespace {

constexpr std::size_t k_fold_total_bytes = std::size_t{64} << 20;
constexpr std::size_t k_fold_min_rank_bytes = std::size_t{16} << 10;
constexpr std::size_t k_fold_max_rank_bytes = std::size_t{1} << 20;
constexpr std::string_view k_rule = "----------------\n";

// "node1,node2": the hosts of `ranks`, each once, in rank order.
std::string hosts_of(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  std::vector<std::string> seen;
  for (int rank : ranks) {
    const auto index = static_cast<std::size_t>(rank);
    if (index < hosts.size() && std::ranges::find(seen, hosts[index]) == seen.end()) {
      seen.push_back(hosts[index]);
    }
  }
  return fmt::format("{}", fmt::join(seen, ","));
}

} // namespace

void FoldBuffer::reset(int world_size) {
  ranks_.assign(static_cast<std::size_t>(std::max(world_size, 0)), RankText{});
  cap_ = world_size > 0 ? k_fold_total_bytes / static_cast<std::size_t>(world_size) : k_fold_max_rank_bytes;
  cap_ = std::clamp(cap_, k_fold_min_rank_bytes, k_fold_max_rank_bytes);
}

void FoldBuffer::add(int rank, std::string_view text, std::string_view end) {
  const auto index = static_cast<std::size_t>(rank);
  if (index >= ranks_.size()) {
    return;
  }
  RankText& kept = ranks_[index];
  if (kept.cut) {
    return;
  }
  if (kept.text.size() + text.size() + end.size() > cap_) {
    kept.cut = true;
    kept.text += fmt::format("(ddl: output cut at {} KiB for --fold; --log-dir keeps all of it)\n", cap_ >> 10);
    return;
  }
  kept.text.append(text).append(end);
}

std::string FoldBuffer::folded(const std::vector<std::string>& hosts) const {
  std::map<std::string_view, std::vector<int>> groups;
  for (std::size_t rank = 0; rank < ranks_.size(); ++rank) {
    if (!ranks_[rank].text.empty()) {
      groups[ranks_[rank].text].push_back(static_cast<int>(rank));
    }
  }
  std::vector<std::pair<std::string_view, std::vector<int>>> ordered(groups.begin(), groups.end());
  std::ranges::sort(ordered, {}, [](const auto& group) { return group.second.front(); });
  std::string out;
  for (const auto& [text, ranks] : ordered) {
    out += k_rule;
    out += fmt::format("rank{} {} ({})\n", ranks.size() == 1 ? "" : "s", compress_ranks(ranks), hosts_of(ranks, hosts));
    out += k_rule;
    out += text;
    if (!text.ends_with('\n')) {
      out += '\n';
    }
  }
  return out;
}

} // namespace ddl
