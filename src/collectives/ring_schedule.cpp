// SPDX-License-Identifier: MIT
#include "src/collectives/ring_schedule.hpp"

#include <algorithm>

namespace ddl::coll {

namespace {

struct Chunk {
  std::size_t offset = 0;
  std::size_t count = 0;
};

Chunk chunk_of(int index, int world, std::size_t count) {
  auto n = static_cast<std::size_t>(world);
  auto c = static_cast<std::size_t>(index);
  std::size_t base = count / n;
  std::size_t extra = count % n;
  return {c * base + std::min(c, extra), base + (c < extra ? 1 : 0)};
}

int wrap(int value, int world) { return ((value % world) + world) % world; }

// Appends the segments of `chunk` for `step`; returns how many.
std::size_t add_segments(std::vector<RingSegment>& out, int step, Chunk chunk,
                         std::size_t segment_elements, long first_dependency) {
  std::size_t added = 0;
  for (std::size_t done = 0; done < chunk.count; done += segment_elements, ++added) {
    long dependency = first_dependency < 0 ? -1 : first_dependency + static_cast<long>(added);
    out.push_back({step, chunk.offset + done, std::min(segment_elements, chunk.count - done),
                   dependency});
  }
  return added;
}

} // namespace

RingSchedule make_ring_schedule(int rank, int world, std::size_t count,
                                std::size_t segment_elements) {
  RingSchedule schedule;
  schedule.reduce_steps = world - 1;
  segment_elements = std::max<std::size_t>(segment_elements, 1);
  if (world < 2) {
    return schedule;
  }
  long previous_receives = -1;  // index of the first receive of the previous step
  for (int step = 0; step < 2 * (world - 1); ++step) {
    // Reduce-scatter: send chunk r-s, receive r-s-1. Allgather (t = s-n+1):
    // send chunk r+1-t, receive r-t. Either way send(s) = receive(s-1).
    int send_chunk = step < world - 1 ? rank - step : rank + 1 - (step - world + 1);
    int recv_chunk = send_chunk - 1;
    add_segments(schedule.sends, step, chunk_of(wrap(send_chunk, world), world, count),
                 segment_elements, step == 0 ? -1 : previous_receives);
    previous_receives = static_cast<long>(schedule.receives.size());
    add_segments(schedule.receives, step, chunk_of(wrap(recv_chunk, world), world, count),
                 segment_elements, -1);
  }
  return schedule;
}

} // namespace ddl::coll
