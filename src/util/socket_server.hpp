// SPDX-License-Identifier: MIT
#pragma once

// What each of ddl's socket servers shares (the job rendezvous, Horovod's
// key/value rendezvous, the live-job control socket, a sweep's session
// broker): a listening socket, one thread of its own that serves it (started
// without signals: they stay the main thread's), an eventfd that wakes that
// thread, a clean stop (the flag, a wake, the join, both sockets closed), and
// accepting bounded by the server's client count. Each server keeps its own
// loop (epoll or poll) and its own clients; it polls listener() and
// wake_fd(), and returns from its loop once stopping().

#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <limits>
#include <string_view>
#include <thread>

#include "src/util/error.hpp"
#include "src/util/net.hpp"

namespace ddl {

class SocketServer {
public:
  SocketServer() = default;
  ~SocketServer() { stop(); }
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Takes the listening socket `listener` and makes the wake-up eventfd;
  // ExitCode::launch ("WHAT: why") where it cannot. Nothing runs yet.
  Result<void> open(net::Fd listener, std::string_view what);
  // Runs `serve` on the server's thread (after open).
  void run(std::function<void()> serve);
  // Asks the loop to end (stopping() true, a wake), joins the thread, closes
  // both sockets. Once; later calls do nothing.
  void stop();

  bool running() const { return thread_.joinable(); }
  bool stopping() const { return stopping_.load(); }
  int listener() const { return listener_.get(); }
  int wake_fd() const { return wake_.get(); }
  // Wakes the loop (from any thread); drain_wake() on the loop's side.
  void wake() const;
  void drain_wake() const;

  enum class AcceptEnd { drained, full, out_of_fds, failed };
  // Accepts the connections waiting (non-blocking, close-on-exec) while
  // `room()` says the client bound allows one more, at most `batch` of them,
  // each handed to `take(fd, peer)` to keep or close. Why it stopped: none
  // left waiting, no room or the batch done, out of descriptors (EMFILE,
  // ENFILE: the caller frees one or pauses), or another error (errno says
  // which; the next poll tries again).
  AcceptEnd accept_waiting(const std::function<bool()>& room,
                           const std::function<void(int fd, const sockaddr_storage& peer)>& take,
                           std::size_t batch = std::numeric_limits<std::size_t>::max()) const;

private:
  net::Fd listener_;
  net::Fd wake_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

} // namespace ddl
