// SPDX-License-Identifier: MIT
// The TCP ring's internals, shared by tcp_ring.cpp (connection set-up and the
// single-threaded event loop for small buffers) and tcp_ring_threads.cpp
// (one sender thread per stream for large buffers).
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "src/collectives/doubling_schedule.hpp"
#include "src/collectives/ring_schedule.hpp"
#include "src/collectives/tcp_ring.hpp"
#include "src/util/net.hpp"

namespace ddl::coll::detail {

// After a non-blocking send() or recv() returned -1: nothing was lost, try
// again once the socket is ready.
inline bool retry_later() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

// Per-stream progress through the schedule during one allreduce.
struct StreamCursor {
  std::size_t next_send = 0;
  std::size_t sent = 0;
  std::size_t next_recv = 0;
  std::size_t received = 0;
  std::size_t reduced = 0;  // bytes of the segment being received already reduced
};

class TcpRing final : public HostCollective {
public:
  TcpRing(int rank, int world, TcpOptions options)
      : rank_(rank), world_(world), options_(std::move(options)) {}
  ~TcpRing() override;
  TcpRing(const TcpRing&) = delete;
  TcpRing& operator=(const TcpRing&) = delete;

  Result<void> join(const Allgather& exchange);

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string name() const override { return "tcp"; }
  std::vector<std::string> facts() const override {
    std::string ring = fmt::format("ring over TCP, {} stream(s) per neighbour, {} KiB segments",
                                   options_.streams, options_.segment_bytes / 1024);
    if (options_.doubling_bytes > 0 && world_ > 1) {
      ring += fmt::format("; recursive doubling up to {} KiB", options_.doubling_bytes / 1024);
    }
    if (options_.halving_bytes > options_.doubling_bytes && world_ > 1) {
      ring += fmt::format("; halving-doubling up to {} KiB", options_.halving_bytes / 1024);
    }
    return {ring};
  }
  Result<void> allreduce(const void* send, void* recv, std::size_t count, DataType type,
                         ReduceOp op) override;

private:
  struct Call {
    const char* send;
    char* recv;
    std::size_t element;
    DataType type;
    ReduceOp op;
  };
  const RingSchedule& schedule_for(std::size_t count, std::size_t element);
  Result<bool> pump_send(std::size_t stream, const Call& call);
  Result<bool> pump_recv(std::size_t stream, const Call& call);
  Result<void> wait_for_io(std::chrono::steady_clock::time_point& last_progress,
                           bool sends_too);
  bool received(long index) const {
    return index < 0 || received_[static_cast<std::size_t>(index)].load(std::memory_order_acquire) != 0;
  }
  void reset_received();
  Result<void> run_event_loop(const Call& call);
  // Large buffers: sender threads per stream, receiving on the caller's thread.
  Result<void> run_threaded(const Call& call);
  void start_senders();
  void sender_main(std::size_t stream);
  Result<void> send_stream(std::size_t stream, const Call& call);
  // Small and medium buffers: a butterfly over one socket per partner.
  Result<void> run_butterfly(const Call& call, std::size_t count,
                             const std::vector<DoublingStep>& steps);
  Result<void> transfer(int peer, const char* out, std::size_t out_bytes, char* in,
                        std::size_t in_bytes);
  int link_to(int peer) const;

  int rank_;
  int world_;
  TcpOptions options_;
  std::vector<net::Fd> right_;  // one per stream, we send on these
  std::vector<net::Fd> left_;   // one per stream, we receive on these
  std::vector<std::vector<char>> scratch_;
  struct Link {
    int rank;
    net::Fd fd;
  };
  std::vector<Link> partner_links_;
  std::vector<DoublingStep> doubling_steps_;
  std::vector<DoublingStep> halving_steps_;
  std::vector<char> butterfly_scratch_;
  RingSchedule schedule_;
  std::size_t schedule_count_ = 0;
  std::size_t schedule_element_ = 0;
  // received_[i] != 0 once receive i of the schedule is in place (reduced).
  std::unique_ptr<std::atomic<std::uint8_t>[]> received_;
  std::size_t received_capacity_ = 0;
  std::vector<StreamCursor> cursors_;
  std::size_t pending_sends_ = 0;
  std::size_t pending_recvs_ = 0;

  // Sender threads: each waits for a new generation, then sends its stream.
  std::vector<std::thread> senders_;
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> senders_done_{0};
  std::atomic<bool> stopping_{false};
  const Call* current_ = nullptr;
  std::mutex sender_error_mutex_;
  std::string sender_error_;
};


} // namespace ddl::coll::detail
