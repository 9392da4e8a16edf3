// SPDX-License-Identifier: MIT
#include "src/util/socket_server.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/core.h>

#include "src/util/signals.hpp"

namespace ddl {

Result<void> SocketServer::open(net::Fd listener, std::string_view what) {
  wake_ = net::Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_) {
    return fail(ExitCode::launch, fmt::format("{}: {}", what, std::strerror(errno)));
  }
  listener_ = std::move(listener);
  stopping_ = false;
  return {};
}

void SocketServer::run(std::function<void()> serve) { thread_ = thread_without_signals(std::move(serve)); }

void SocketServer::stop() {
  if (thread_.joinable()) {
    stopping_ = true;
    wake();
    thread_.join();
  }
  listener_.reset();
  wake_.reset();
}

void SocketServer::wake() const {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(wake_.get(), &one, sizeof one);
}

void SocketServer::drain_wake() const {
  std::uint64_t count = 0;
  [[maybe_unused]] ssize_t got = ::read(wake_.get(), &count, sizeof count);
}

SocketServer::AcceptEnd SocketServer::accept_waiting(
    const std::function<bool()>& room, const std::function<void(int fd, const sockaddr_storage& peer)>& take,
    std::size_t batch) const {
  for (std::size_t taken = 0; taken < batch && room(); ++taken) {
    sockaddr_storage peer{};
    socklen_t size = sizeof peer;
    int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &size, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      take(fd, peer);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) {
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return AcceptEnd::drained;
    }
    return errno == EMFILE || errno == ENFILE ? AcceptEnd::out_of_fds : AcceptEnd::failed;
  }
  return AcceptEnd::full;
}

} // namespace ddl
