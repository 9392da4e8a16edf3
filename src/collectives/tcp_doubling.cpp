// SPDX-License-Identifier: MIT
// Small and medium buffers: recursive doubling or halving-doubling
// (doubling_schedule.hpp) over one socket per partner. Each exchange sends
// and receives at once on one thread.
#include <cerrno>
#include <cstring>

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include "src/collectives/tcp_ring_impl.hpp"

namespace ddl::coll::detail {

int TcpRing::link_to(int peer) const {
  for (const auto& link : partner_links_) {
    if (link.rank == peer) {
      return link.fd.get();
    }
  }
  return -1;
}

// Sends `out` to and receives `in` from `peer` (either may be empty),
// spinning briefly before sleeping in poll() like the ring's event loop.
Result<void> TcpRing::transfer(int peer, const char* out, std::size_t out_bytes, char* in,
                               std::size_t in_bytes) {
  int fd = link_to(peer);
  std::size_t sent = 0;
  std::size_t got = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (sent < out_bytes || got < in_bytes) {
    bool progressed = false;
    if (sent < out_bytes) {
      ssize_t n = ::send(fd, out + sent, out_bytes - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && !retry_later()) {
        return fail(ExitCode::launch, fmt::format("rank {}: sending to rank {}: {}", rank_, peer,
                                                  std::strerror(errno)));
      }
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        progressed = true;
      }
    }
    if (got < in_bytes) {
      ssize_t n = ::recv(fd, in + got, in_bytes - got, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && !retry_later())) {
        return fail(ExitCode::launch,
                    fmt::format("rank {}: receiving from rank {}: {}", rank_, peer,
                                n == 0 ? "connection closed" : std::strerror(errno)));
      }
      if (n > 0) {
        got += static_cast<std::size_t>(n);
        progressed = true;
      }
    }
    auto now = std::chrono::steady_clock::now();
    if (progressed) {
      last_progress = now;
    } else if (now - last_progress < options_.spin) {
      sched_yield();
    } else if (now - last_progress > options_.stall_timeout) {
      return fail(ExitCode::launch,
                  fmt::format("rank {}: rank {} made no progress for {}s; it is stuck", rank_,
                              peer, options_.stall_timeout.count() / 1000));
    } else {
      short events = static_cast<short>((sent < out_bytes ? POLLOUT : 0) |
                                        (got < in_bytes ? POLLIN : 0));
      pollfd pfd{fd, events, 0};
      ::poll(&pfd, 1, 1000);
    }
  }
  return {};
}

Result<void> TcpRing::run_butterfly(const Call& call, std::size_t count,
                                    const std::vector<DoublingStep>& steps) {
  if (call.recv != call.send) {
    std::memcpy(call.recv, call.send, count * call.element);
  }
  auto blocks = static_cast<std::size_t>(butterfly_blocks(world_));
  auto offset_of = [&](int block) {
    return count * static_cast<std::size_t>(block) / blocks * call.element;
  };
  auto bytes_of = [&](Blocks range) { return offset_of(range.last) - offset_of(range.first); };
  butterfly_scratch_.resize(count * call.element);
  char* theirs = butterfly_scratch_.data();
  for (const DoublingStep& step : steps) {
    bool replacing = step.action == DoublingAction::receive ||
                     step.action == DoublingAction::exchange;
    bool reducing = step.action == DoublingAction::receive_reduce ||
                    step.action == DoublingAction::exchange_reduce;
    char* mine = call.recv + offset_of(step.receive.first);
    char* in = replacing ? mine : theirs;
    if (auto ok = transfer(step.peer, call.recv + offset_of(step.send.first), bytes_of(step.send),
                           in, bytes_of(step.receive));
        !ok) {
      return ok;
    }
    if (reducing) {
      const char* lower = step.peer < rank_ ? theirs : mine;
      const char* higher = step.peer < rank_ ? mine : theirs;
      reduce(mine, lower, higher, bytes_of(step.receive) / call.element, call.type, call.op);
    }
  }
  return {};
}

} // namespace ddl::coll::detail
