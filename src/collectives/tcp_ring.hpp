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
  // (2(n-1) hops): latency, not bandwidth, decides there. 0: off.
  std::size_t doubling_bytes = 64 * 1024;
  // Up to this size (and above doubling_bytes), halving-doubling: the ring's
  // bytes in 2 log2(n) exchanges instead of its 2(n-1) hops. 0: off.
  std::size_t halving_bytes = 1 << 20;
  // SO_SNDBUF, which bounds the bytes in flight per socket (the kernel
  // doubles it). Autotuning grows it to 4 MiB, and on the veth test hosts
  // that many bytes from every rank at once overflowed the receive backlog:
  // thousands of retransmits and a third of the bandwidth at 64 MiB. 1 MiB in
  // flight still covers 80 Gb/s at a 100 us round trip.
  int send_buffer = 512 << 10;
  // The same for the butterflies' partner links, which carry at most 1 MiB
  // at once: with 512 KiB, halving-doubling still counted about 3
  // retransmits per 1 MiB allreduce there; 128 KiB halved its time.
  int partner_send_buffer = 128 << 10;
  std::string listen_address = "127.0.0.1"; // what this rank binds and advertises
  std::chrono::milliseconds connect_timeout{60'000};
  std::chrono::milliseconds stall_timeout{120'000};  // no progress at all: error
  // Small buffers: how long to keep polling (yielding the CPU) before sleeping.
  std::chrono::microseconds spin{200};
};

// Joins the ring: each rank listens on an ephemeral port of
// `options.listen_address`, shares "host:port:cookie" through `exchange`,
// connects `streams` sockets to its right neighbour and accepts as many from
// its left one, plus one socket per butterfly partner (recursive doubling
// and halving-doubling share them; the cookie proves a connection comes from
// the job).
Result<std::unique_ptr<Collective>> connect_tcp_ring(int rank, int world,
                                                     const Allgather& exchange,
                                                     const TcpOptions& options);

} // namespace ddl::coll
