// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

namespace ddl::coll {

// Butterfly allreduces over p = the largest power of two <= world ranks. The
// first 2(world-p) ranks pair up around them: the even one hands its buffer
// to the odd one before and gets the result back after.
//
// - Recursive doubling, for small buffers: log2(p) exchanges of the whole
//   buffer, instead of the ring's 2(n-1) hops.
// - Halving-doubling (Rabenseifner), for medium ones: a reduce-scatter that
//   halves the part each rank keeps at every exchange, then an allgather that
//   doubles it back: as few bytes as the ring in 2 log2(p) exchanges.
//
// Ranges of the buffer are in blocks: the buffer cut into p blocks.
struct Blocks {
  int first = 0;
  int last = 0;  // one past
  bool operator==(const Blocks&) const = default;
};

enum class DoublingAction {
  send,             // send our `send` blocks to peer
  receive,          // peer's `receive` blocks replace ours (final results)
  receive_reduce,   // ours op theirs over `receive`, the lower rank's first
  exchange_reduce,  // both at once: send `send`, receive and reduce `receive`
  exchange,         // both at once: send `send`, the received blocks replace ours
};

struct DoublingStep {
  DoublingAction action;
  int peer;
  Blocks send;
  Blocks receive;
};

enum class Butterfly { doubling, halving_doubling };

// The number of blocks (p) the steps' ranges refer to.
int butterfly_blocks(int world);

// The steps of `rank` of `world`, in order. Reducing in rank order (the lower
// rank's operand first) leaves identical bits on every rank.
std::vector<DoublingStep> make_doubling_steps(int rank, int world, Butterfly kind);

// The peers of `steps`, each once, ascending.
std::vector<int> doubling_peers(const std::vector<DoublingStep>& steps);

} // namespace ddl::coll
