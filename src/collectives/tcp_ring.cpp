// SPDX-License-Identifier: MIT
#include "src/collectives/tcp_ring.hpp"
#include "src/collectives/tcp_ring_impl.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/core.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include "src/collectives/peer_address.hpp"
#include "src/collectives/ring_schedule.hpp"
#include "src/util/text.hpp"

namespace ddl::coll {

namespace detail {

constexpr std::uint32_t k_hello_magic = 0x44444c52;  // "DDLR"

struct Hello {
  std::uint32_t magic = k_hello_magic;
  std::uint32_t rank = 0;
  std::uint32_t stream = 0;
  std::uint32_t reserved = 0;
  std::uint64_t cookie = 0;
};

using Peer = PeerAddress;

constexpr std::uint32_t k_partner_stream = 0xffffffff;  // Hello.stream of a partner link

Result<net::Fd> connect_with_hello(const Peer& peer, std::uint32_t rank, std::uint32_t stream,
                                   net::Clock::time_point deadline) {
  auto fd = net::dial_tcp(peer.host, peer.port, deadline);
  if (!fd) {
    return fail(fd.error());
  }
  Hello hello{k_hello_magic, rank, stream, 0, peer.cookie};
  auto bytes = std::string_view(reinterpret_cast<const char*>(&hello), sizeof hello);
  if (auto sent = net::send_all(fd->get(), bytes, deadline); !sent) {
    const char* why = sent.end == net::IoEnd::timed_out ? "timed out" : std::strerror(sent.error);
    return fail(ExitCode::launch, fmt::format("send: {}", why));
  }
  return fd;
}

// The next connection on `listener`, in the ring's words when none comes.
Result<net::Fd> accept_neighbour(int listener, net::Clock::time_point deadline) {
  net::Fd fd;
  auto accepted = net::accept_one(listener, fd, deadline);
  if (accepted.end == net::IoEnd::failed && accepted.call == "accept") {
    return fail(ExitCode::launch, fmt::format("accept: {}", std::strerror(accepted.error)));
  }
  if (!accepted) {
    return fail(ExitCode::launch, "timed out waiting for the ring neighbour to connect");
  }
  return fd;
}

// Reads a Hello; false when it does not come whole before `deadline`.
bool read_hello(int fd, Hello& hello, net::Clock::time_point deadline) {
  return static_cast<bool>(
      net::recv_exact(fd, reinterpret_cast<char*>(&hello), sizeof hello, deadline));
}

Result<void> TcpRing::join(const Allgather& exchange) {
  auto deadline = std::chrono::steady_clock::now() + options_.connect_timeout;
  auto listener = net::listen_tcp(options_.listen_address, 0, 1024);
  if (!listener) {
    return fail(listener.error());
  }
  const std::uint64_t cookie = random_cookie();
  auto all = exchange(listening_address(listener->get(), cookie));
  if (!all) {
    return fail(all.error());
  }
  if (all->size() != static_cast<std::size_t>(world_)) {
    return fail(ExitCode::launch, "ring exchange returned the wrong number of addresses");
  }
  std::vector<Peer> peers;
  for (const auto& text : *all) {
    auto peer = parse_peer_address(text, "ring");
    if (!peer) {
      return fail(peer.error());
    }
    peers.push_back(*peer);
  }
  auto me = static_cast<std::uint32_t>(rank_);
  auto streams = static_cast<std::size_t>(options_.streams);
  // Both butterflies have the same partners; none when the ring does every size.
  if (options_.doubling_bytes > 0 || options_.halving_bytes > 0) {
    doubling_steps_ = make_doubling_steps(rank_, world_, Butterfly::doubling);
    halving_steps_ = make_doubling_steps(rank_, world_, Butterfly::halving_doubling);
  }
  std::size_t lower_partners = 0;
  // Connect first (to the right neighbour, and to the higher-ranked butterfly
  // partners): the listen backlog completes our connections even before the
  // other side accepts, so no rank waits on another here.
  for (std::size_t s = 0; s < streams; ++s) {
    auto fd = connect_with_hello(peers[static_cast<std::size_t>((rank_ + 1) % world_)], me,
                                 static_cast<std::uint32_t>(s), deadline);
    if (!fd) {
      return fail(fd.error());
    }
    right_.push_back(std::move(*fd));
  }
  for (int partner : doubling_peers(doubling_steps_)) {
    if (partner < rank_) {
      partner_links_.push_back({partner, net::Fd()});
      ++lower_partners;
      continue;
    }
    auto fd = connect_with_hello(peers[static_cast<std::size_t>(partner)], me, k_partner_stream,
                                 deadline);
    if (!fd) {
      return fail(fd.error());
    }
    partner_links_.push_back({partner, std::move(*fd)});
  }
  left_.resize(streams);
  auto left_rank = static_cast<std::uint32_t>((rank_ + world_ - 1) % world_);
  for (std::size_t accepted = 0; accepted < streams + lower_partners;) {
    auto fd = accept_neighbour(listener->get(), deadline);
    if (!fd) {
      return fail(fd.error());
    }
    Hello hello;
    if (!read_hello(fd->get(), hello, deadline) || hello.magic != k_hello_magic ||
        hello.cookie != cookie) {
      continue;  // not from this job: drop it and keep waiting
    }
    net::Fd* slot = nullptr;
    if (hello.stream == k_partner_stream) {
      for (auto& link : partner_links_) {
        if (static_cast<std::uint32_t>(link.rank) == hello.rank && link.rank < rank_ && !link.fd) {
          slot = &link.fd;
        }
      }
    } else if (hello.rank == left_rank && hello.stream < streams && !left_[hello.stream]) {
      slot = &left_[hello.stream];
    }
    if (slot != nullptr) {
      *slot = std::move(*fd);
      ++accepted;
    }
  }
  for (std::size_t s = 0; s < streams; ++s) {
    for (int fd : {right_[s].get(), left_[s].get()}) {
      net::tune_socket(fd, options_.send_buffer);
      net::set_nonblocking(fd);
    }
  }
  for (const auto& link : partner_links_) {
    net::tune_socket(link.fd.get(), options_.partner_send_buffer);
    net::set_nonblocking(link.fd.get());
  }
  scratch_.assign(streams, std::vector<char>(options_.segment_bytes + 64));
  cursors_.resize(streams);
  return {};
}

const RingSchedule& TcpRing::schedule_for(std::size_t count, std::size_t element) {
  if (count != schedule_count_ || element != schedule_element_) {
    schedule_ = make_ring_schedule(rank_, world_, count, options_.segment_bytes / element);
    schedule_count_ = count;
    schedule_element_ = element;
  }
  return schedule_;
}

Result<bool> TcpRing::pump_send(std::size_t stream, const Call& call) {
  auto& cur = cursors_[stream];
  const auto& sends = schedule_.sends;
  bool progressed = false;
  while (cur.next_send < sends.size()) {
    const RingSegment& seg = sends[cur.next_send];
    if (!received(seg.dependency)) {
      break;
    }
    const char* base = seg.step == 0 ? call.send : call.recv;
    std::size_t bytes = seg.count * call.element;
    ssize_t n = ::send(right_[stream].get(), base + seg.offset * call.element + cur.sent,
                       bytes - cur.sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (retry_later()) {
        break;
      }
      return fail(ExitCode::launch, fmt::format("rank {}: sending to rank {}: {}", rank_,
                                                (rank_ + 1) % world_, std::strerror(errno)));
    }
    progressed = true;
    cur.sent += static_cast<std::size_t>(n);
    if (cur.sent == bytes) {
      cur.sent = 0;
      cur.next_send += right_.size();
      --pending_sends_;
    }
  }
  return progressed;
}

Result<bool> TcpRing::pump_recv(std::size_t stream, const Call& call) {
  auto& cur = cursors_[stream];
  const auto& receives = schedule_.receives;
  bool progressed = false;
  while (cur.next_recv < receives.size()) {
    const RingSegment& seg = receives[cur.next_recv];
    bool reducing = seg.step < schedule_.reduce_steps;
    std::size_t bytes = seg.count * call.element;
    char* target = reducing ? scratch_[stream].data() : call.recv + seg.offset * call.element;
    ssize_t n = ::recv(left_[stream].get(), target + cur.received, bytes - cur.received,
                       MSG_DONTWAIT);
    if (n < 0 && retry_later()) {
      break;
    }
    if (n <= 0) {
      return fail(ExitCode::launch,
                  fmt::format("rank {}: receiving from rank {}: {}", rank_,
                              (rank_ + world_ - 1) % world_,
                              n == 0 ? "connection closed" : std::strerror(errno)));
    }
    progressed = true;
    cur.received += static_cast<std::size_t>(n);
    if (reducing) {
      // What arrived is reduced at once, while it is still in the cache.
      std::size_t whole = cur.received / call.element * call.element;
      if (whole > cur.reduced) {
        std::size_t at = seg.offset * call.element + cur.reduced;
        reduce(call.recv + at, call.send + at, target + cur.reduced, (whole - cur.reduced) / call.element,
               call.type, call.op);
        cur.reduced = whole;
      }
    }
    if (cur.received == bytes) {
      received_[cur.next_recv].store(1, std::memory_order_release);
      received_[cur.next_recv].notify_all();
      cur.received = 0;
      cur.reduced = 0;
      cur.next_recv += left_.size();
      --pending_recvs_;
    }
  }
  return progressed;
}

Result<void> TcpRing::wait_for_io(std::chrono::steady_clock::time_point& last_progress,
                                  bool sends_too) {
  std::vector<pollfd> fds;
  for (std::size_t s = 0; s < cursors_.size(); ++s) {
    const auto& cur = cursors_[s];
    if (sends_too && cur.next_send < schedule_.sends.size()) {
      if (received(schedule_.sends[cur.next_send].dependency)) {
        fds.push_back({right_[s].get(), POLLOUT, 0});
      }
    }
    if (cur.next_recv < schedule_.receives.size()) {
      fds.push_back({left_[s].get(), POLLIN, 0});
    }
  }
  int ready = ::poll(fds.data(), fds.size(), 1000);
  if (ready < 0 && errno != EINTR) {
    return fail(ExitCode::launch, std::string("poll: ") + std::strerror(errno));
  }
  if (ready > 0) {
    last_progress = std::chrono::steady_clock::now();
  } else if (std::chrono::steady_clock::now() - last_progress > options_.stall_timeout) {
    return fail(ExitCode::launch,
                fmt::format("rank {}: the ring made no progress for {}s; a neighbour is stuck",
                            rank_, options_.stall_timeout.count() / 1000));
  }
  return {};
}

Result<void> TcpRing::allreduce(const void* send, void* recv, std::size_t count, DataType type,
                                ReduceOp op) {
  std::size_t element = element_size(type);
  if (world_ == 1 || count == 0) {
    if (send != recv && count > 0) {
      std::memmove(recv, send, count * element);
    }
    return {};
  }
  Call call{static_cast<const char*>(send), static_cast<char*>(recv), element, type, op};
  if (count * element <= options_.doubling_bytes) {
    return run_butterfly(call, count, doubling_steps_);
  }
  if (count * element <= options_.halving_bytes) {
    return run_butterfly(call, count, halving_steps_);
  }
  schedule_for(count, element);
  reset_received();
  for (std::size_t s = 0; s < cursors_.size(); ++s) {
    cursors_[s] = StreamCursor{s, 0, s, 0, 0};
  }
  pending_sends_ = schedule_.sends.size();
  pending_recvs_ = schedule_.receives.size();
  if (count * element >= options_.threaded_bytes) {
    return run_threaded(call);
  }
  return run_event_loop(call);
}

void TcpRing::reset_received() {
  std::size_t needed = schedule_.receives.size();
  if (received_capacity_ < needed) {
    received_ = std::make_unique<std::atomic<std::uint8_t>[]>(needed);
    received_capacity_ = needed;
  }
  for (std::size_t i = 0; i < needed; ++i) {
    received_[i].store(0, std::memory_order_relaxed);
  }
}

// Small buffers: one thread moves both directions with non-blocking sockets,
// which costs no thread hand-off per hop.
Result<void> TcpRing::run_event_loop(const Call& call) {
  auto last_progress = std::chrono::steady_clock::now();
  auto idle_since = last_progress;
  while (pending_sends_ > 0 || pending_recvs_ > 0) {
    bool progressed = false;
    for (std::size_t s = 0; s < cursors_.size(); ++s) {
      auto sent = pump_send(s, call);
      if (!sent) {
        return fail(sent.error());
      }
      auto got = pump_recv(s, call);
      if (!got) {
        return fail(got.error());
      }
      progressed = progressed || *sent || *got;
    }
    if (progressed) {
      idle_since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - idle_since < options_.spin) {
      // Small messages: a neighbour usually answers within microseconds, and
      // sleeping in poll() would add a scheduler wake-up to every hop.
      sched_yield();
    } else if (auto ok = wait_for_io(last_progress, true); !ok) {
      return ok;
    }
  }
  return {};
}

} // namespace detail

Result<std::unique_ptr<Collective>> connect_tcp_ring(int rank, int world,
                                                     const Allgather& exchange,
                                                     const TcpOptions& options) {
  if (world < 1 || rank < 0 || rank >= world) {
    return fail(ExitCode::usage, fmt::format("invalid rank {} of {}", rank, world));
  }
  TcpOptions checked = options;
  checked.streams = std::clamp(checked.streams, 1, 64);
  checked.segment_bytes = std::max<std::size_t>(checked.segment_bytes, 4096) / 64 * 64;
  auto ring = std::make_unique<detail::TcpRing>(rank, world, checked);
  if (world > 1) {
    if (auto ok = ring->join(exchange); !ok) {
      return fail(ok.error());
    }
  }
  return std::unique_ptr<Collective>(std::move(ring));
}

} // namespace ddl::coll
