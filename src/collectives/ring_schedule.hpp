// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <vector>

namespace ddl::coll {

// One piece of a ring allreduce as seen by one rank: a segment of one chunk
// sent to the right neighbour or received from the left one.
struct RingSegment {
  int step = 0;               // 0..n-2 reduce-scatter, n-1..2n-3 allgather
  std::size_t offset = 0;     // first element in the buffer
  std::size_t count = 0;      // elements
  long dependency = -1;       // send: index of the receive it forwards; -1: none
};

// The bandwidth-optimal ring (reduce-scatter, then allgather) for `rank` of
// `world`: the buffer is cut into `world` chunks (the first count % world get
// one element more), each step moves one chunk, cut into segments of at most
// `segment_elements`. Every rank sends 2(n-1)/n of the buffer. Send k of step
// s forwards receive k of step s-1 (same chunk, same segmentation), which is
// what lets segments pipeline through the ring. Empty chunks have no segment.
struct RingSchedule {
  std::vector<RingSegment> sends;
  std::vector<RingSegment> receives;
  int reduce_steps = 0;       // steps below this reduce; the rest copy
};

RingSchedule make_ring_schedule(int rank, int world, std::size_t count,
                                std::size_t segment_elements);

} // namespace ddl::coll
