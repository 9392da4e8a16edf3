// SPDX-License-Identifier: MIT
#include "src/collectives/doubling_schedule.hpp"

#include <algorithm>

namespace ddl::coll {

int butterfly_blocks(int world) {
  int p = 1;
  while (p * 2 <= world) {
    p *= 2;
  }
  return p;
}

namespace {

// The exchanges among the p ranks of the power of two (virtual ranks).
void add_core_steps(std::vector<DoublingStep>& steps, int virtual_rank, int p, int paired,
                    Butterfly kind) {
  auto peer_of = [&](int other) {
    return other < paired / 2 ? other * 2 + 1 : other + paired / 2;
  };
  Blocks all{0, p};
  if (kind == Butterfly::doubling) {
    for (int mask = 1; mask < p; mask <<= 1) {
      steps.push_back({DoublingAction::exchange_reduce, peer_of(virtual_rank ^ mask), all, all});
    }
    return;
  }
  // Reduce-scatter: at each exchange the lower rank keeps the lower half of
  // what it holds, the higher one the upper half.
  Blocks kept = all;
  std::vector<DoublingStep> scatter;
  for (int mask = 1; mask < p; mask <<= 1) {
    int half = (kept.last - kept.first) / 2;
    Blocks lower{kept.first, kept.first + half};
    Blocks upper{kept.first + half, kept.last};
    bool keep_lower = (virtual_rank & mask) == 0;
    kept = keep_lower ? lower : upper;
    scatter.push_back({DoublingAction::exchange_reduce, peer_of(virtual_rank ^ mask),
                       keep_lower ? upper : lower, kept});
  }
  steps.insert(steps.end(), scatter.begin(), scatter.end());
  // Allgather: the same exchanges backwards, each side sending what it kept.
  for (auto it = scatter.rbegin(); it != scatter.rend(); ++it) {
    steps.push_back({DoublingAction::exchange, it->peer, it->receive, it->send});
  }
}

} // namespace

std::vector<DoublingStep> make_doubling_steps(int rank, int world, Butterfly kind) {
  std::vector<DoublingStep> steps;
  int p = butterfly_blocks(world);
  Blocks all{0, p};
  int paired = 2 * (world - p);  // ranks below this fold in pairs first
  if (rank < paired && rank % 2 == 0) {
    steps.push_back({DoublingAction::send, rank + 1, all, {}});
    steps.push_back({DoublingAction::receive, rank + 1, {}, all});
    return steps;
  }
  if (rank < paired) {
    steps.push_back({DoublingAction::receive_reduce, rank - 1, {}, all});
  }
  int virtual_rank = rank < paired ? rank / 2 : rank - paired / 2;
  add_core_steps(steps, virtual_rank, p, paired, kind);
  if (rank < paired) {
    steps.push_back({DoublingAction::send, rank - 1, all, {}});
  }
  return steps;
}

std::vector<int> doubling_peers(const std::vector<DoublingStep>& steps) {
  std::vector<int> peers;
  for (const auto& step : steps) {
    peers.push_back(step.peer);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

} // namespace ddl::coll
