// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "src/collectives/collective.hpp"

namespace ddl::coll {

struct TcpOptions {
  int streams = 1;                          // TCP connections per neighbour
  std::size_t segment_bytes = 1 << 20;      // pipelining unit
  // From this size on, one sender thread per stream runs beside the receiving
  // caller (two cores copy at once); below it one thread does both.
  std::size_t threaded_bytes = 256 * 1024;
  // Up to this size, recursive doubling (log2 n hops) instead of the ring
  // (2(n-1) hops): latency, not bandwidth, decides there. 0: always the ring.
  std::size_t doubling_bytes = 64 * 1024;
  int send_buffer = 4 << 20;                // SO_SNDBUF where wmem_max allows
  std::string listen_address = "127.0.0.1"; // what this rank binds and advertises
  std::chrono::milliseconds connect_timeout{60'000};
  std::chrono::milliseconds stall_timeout{120'000};  // no progress at all: error
  // Small buffers: how long to keep polling (yielding the CPU) before sleeping.
  std::chrono::microseconds spin{200};
};

// Joins the ring: each rank listens on an ephemeral port of
// `options.listen_address`, shares "host:port:cookie" through `exchange`,
// connects `streams` sockets to its right neighbour and accepts as many from
// its left one, plus one socket per recursive-doubling partner (the cookie
// proves a connection comes from the job).
Result<std::unique_ptr<Collective>> connect_tcp_ring(int rank, int world,
                                                     const Allgather& exchange,
                                                     const TcpOptions& options);

} // namespace ddl::coll
