// SPDX-License-Identifier: MIT
// Large buffers: a sender thread per stream pushes its segments as soon as
// their dependency (the receive they forward) is in place, while the calling
// thread receives and reduces; both directions copy on their own core.
#include <cerrno>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>

#include "src/collectives/tcp_ring_impl.hpp"

namespace ddl::coll::detail {

TcpRing::~TcpRing() {
  stopping_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& thread : senders_) {
    thread.join();
  }
}

void TcpRing::start_senders() {
  for (std::size_t s = senders_.size(); s < right_.size(); ++s) {
    senders_.emplace_back([this, s] { sender_main(s); });
  }
}

void TcpRing::sender_main(std::size_t stream) {
  std::uint32_t seen = 0;
  while (true) {
    generation_.wait(seen);
    seen = generation_.load();
    if (stopping_.load()) {
      return;
    }
    auto sent = send_stream(stream, *current_);
    if (!sent) {
      std::lock_guard lock(sender_error_mutex_);
      if (sender_error_.empty()) {
        sender_error_ = sent.error().message;
      }
    }
    senders_done_.fetch_add(1);
    senders_done_.notify_all();
  }
}

Result<void> TcpRing::send_stream(std::size_t stream, const Call& call) {
  const auto& sends = schedule_.sends;
  int fd = right_[stream].get();
  for (std::size_t i = stream; i < sends.size(); i += right_.size()) {
    const RingSegment& seg = sends[i];
    if (seg.dependency >= 0) {
      received_[static_cast<std::size_t>(seg.dependency)].wait(0, std::memory_order_acquire);
    }
    const char* base = (seg.step == 0 ? call.send : call.recv) + seg.offset * call.element;
    std::size_t bytes = seg.count * call.element;
    auto last_progress = std::chrono::steady_clock::now();
    for (std::size_t done = 0; done < bytes;) {
      ssize_t n = ::send(fd, base + done, bytes - done, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
        last_progress = std::chrono::steady_clock::now();
        continue;
      }
      if (n < 0 && !retry_later()) {
        return fail(ExitCode::launch, fmt::format("rank {}: sending to rank {}: {}", rank_,
                                                  (rank_ + 1) % world_, std::strerror(errno)));
      }
      pollfd pfd{fd, POLLOUT, 0};
      ::poll(&pfd, 1, 1000);
      if (std::chrono::steady_clock::now() - last_progress > options_.stall_timeout) {
        return fail(ExitCode::launch,
                    fmt::format("rank {}: rank {} stopped receiving", rank_, (rank_ + 1) % world_));
      }
    }
  }
  return {};
}

Result<void> TcpRing::run_threaded(const Call& call) {
  start_senders();
  current_ = &call;
  senders_done_.store(0);
  pending_sends_ = 0;  // the sender threads own the sends
  for (auto& cur : cursors_) {
    cur.next_send = schedule_.sends.size();
  }
  generation_.fetch_add(1);
  generation_.notify_all();
  Result<void> outcome;
  auto last_progress = std::chrono::steady_clock::now();
  while (pending_recvs_ > 0) {
    bool progressed = false;
    for (std::size_t s = 0; s < cursors_.size() && outcome; ++s) {
      auto got = pump_recv(s, call);
      if (!got) {
        outcome = fail(got.error());
        break;
      }
      progressed = progressed || *got;
    }
    if (!outcome) {
      break;
    }
    if (!progressed) {
      if (auto ok = wait_for_io(last_progress, false); !ok) {
        outcome = ok;
        break;
      }
    }
  }
  if (!outcome) {
    // Release senders waiting on receives that will never come, then fail.
    for (std::size_t i = 0; i < schedule_.receives.size(); ++i) {
      received_[i].store(1);
      received_[i].notify_all();
    }
  }
  auto streams = static_cast<std::uint32_t>(right_.size());
  for (std::uint32_t done = senders_done_.load(); done < streams; done = senders_done_.load()) {
    senders_done_.wait(done);
  }
  current_ = nullptr;
  if (!outcome) {
    return outcome;
  }
  std::lock_guard lock(sender_error_mutex_);
  if (!sender_error_.empty()) {
    std::string message = std::move(sender_error_);
    sender_error_.clear();
    return fail(ExitCode::launch, message);
  }
  return {};
}

} // namespace ddl::coll::detail
