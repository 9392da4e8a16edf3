// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

namespace ddl::coll {

// Recursive doubling, for buffers too small for the ring's 2(n-1) hops to
// pay: log2(p) exchanges of the whole buffer, p being the largest power of
// two <= world. The first 2(world-p) ranks pair up around them: the even one
// hands its buffer to the odd one before and gets the result back after.
enum class DoublingAction {
  send,             // send the buffer to peer
  receive,          // the buffer becomes peer's (the final result)
  receive_reduce,   // buffer = the lower rank's values op the higher's
  exchange_reduce,  // both at once: send ours, receive theirs, reduce
};

struct DoublingStep {
  DoublingAction action;
  int peer;
};

// The steps of `rank` of `world`, in order. Reducing in rank order (the lower
// rank's operand first) leaves identical bits on every rank.
std::vector<DoublingStep> make_doubling_steps(int rank, int world);

// The peers of `steps`, each once, ascending.
std::vector<int> doubling_peers(const std::vector<DoublingStep>& steps);

} // namespace ddl::coll
