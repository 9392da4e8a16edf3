// SPDX-License-Identifier: MIT
#include "src/collectives/doubling_schedule.hpp"

#include <algorithm>

namespace ddl::coll {

std::vector<DoublingStep> make_doubling_steps(int rank, int world) {
  std::vector<DoublingStep> steps;
  int p = 1;
  while (p * 2 <= world) {
    p *= 2;
  }
  int paired = 2 * (world - p);  // ranks below this fold in pairs first
  if (rank < paired && rank % 2 == 0) {
    steps.push_back({DoublingAction::send, rank + 1});
    steps.push_back({DoublingAction::receive, rank + 1});
    return steps;
  }
  if (rank < paired) {
    steps.push_back({DoublingAction::receive_reduce, rank - 1});
  }
  int virtual_rank = rank < paired ? rank / 2 : rank - paired / 2;
  for (int mask = 1; mask < p; mask <<= 1) {
    int other = virtual_rank ^ mask;
    int peer = other < paired / 2 ? other * 2 + 1 : other + paired / 2;
    steps.push_back({DoublingAction::exchange_reduce, peer});
  }
  if (rank < paired) {
    steps.push_back({DoublingAction::send, rank - 1});
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
