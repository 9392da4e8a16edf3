// SPDX-License-Identifier: MIT
#include "src/util/net.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "src/util/text.hpp"

namespace ddl::net {
namespace {

struct AddrInfoList {
  addrinfo* head = nullptr;
  ~AddrInfoList() {
    if (head) freeaddrinfo(head);
  }
};

Result<void> resolve(const std::string& host, int port, const Wording& wording,
                     AddrInfoList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &out.head);
  if (rc != 0) {
    return fail(ExitCode::launch, fmt::format("cannot resolve {}'{}': {}", wording.address_noun,
                                              host, gai_strerror(rc)));
  }
  return {};
}

int milliseconds_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<long long>(left.count(), 1'000'000));
}

IoStatus failed(std::string_view call, int error = errno) {
  return {IoEnd::failed, error, call};
}

// Waits for `events` on fd until the deadline.
IoStatus wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, milliseconds_left(deadline));
    if (rc > 0) return {};
    if (rc == 0) return {IoEnd::timed_out, 0, "poll"};
    if (errno != EINTR) return failed("poll");
  }
}

// One non-blocking connect to `ai`; "" when connected, otherwise why not.
std::string connect_once(const addrinfo& ai, Clock::time_point deadline, Fd& out) {
  Fd fd(::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return std::strerror(errno);
  if (::connect(fd.get(), ai.ai_addr, ai.ai_addrlen) != 0 && errno != EINPROGRESS) {
    return std::strerror(errno);
  }
  if (!wait_for(fd.get(), POLLOUT, deadline)) return "timed out";
  int error = 0;
  socklen_t size = sizeof error;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
  if (error != 0) return std::strerror(error);
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  out = std::move(fd);
  return {};
}

} // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int Fd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Fd> listen_tcp(const std::string& host, int port, int backlog, const Wording& wording) {
  AddrInfoList addresses;
  if (auto ok = resolve(host, port, wording, addresses); !ok) return fail(ok.error());
  std::string last_error = "no usable address";
  for (addrinfo* ai = addresses.head; ai; ai = ai->ai_next) {
    Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      last_error = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 ||
        ::listen(fd.get(), backlog) != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    return fd;
  }
  return fail(ExitCode::launch, fmt::format("{}cannot listen on {}: {}", wording.prefix,
                                            format_endpoint(host, port), last_error));
}

int local_port(int fd) {
  sockaddr_storage addr{};
  socklen_t size = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  }
  return 0;
}

std::string local_address(int fd) {
  sockaddr_storage addr{};
  socklen_t size = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0) return {};
  std::array<char, NI_MAXHOST> text{};
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), size, text.data(),
                    static_cast<socklen_t>(text.size()), nullptr, 0, NI_NUMERICHOST) != 0) {
    return {};
  }
  return text.data();
}

Result<Fd> dial_tcp(const std::string& host, int port, Clock::time_point deadline,
                    const Wording& wording) {
  AddrInfoList addresses;
  if (auto ok = resolve(host, port, wording, addresses); !ok) return fail(ok.error());
  std::string last_error = "no usable address";
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    for (addrinfo* ai = addresses.head; ai; ai = ai->ai_next) {
      Fd fd;
      last_error = connect_once(*ai, deadline, fd);
      if (fd) return fd;
    }
    if (Clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  return fail(ExitCode::launch, fmt::format("{}cannot connect to {}: {}", wording.prefix,
                                            format_endpoint(host, port), last_error));
}

IoStatus send_all(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto ready = wait_for(fd, POLLOUT, deadline); !ready) return ready;
      continue;
    }
    return failed("send");
  }
  return {};
}

IoStatus recv_exact(int fd, char* into, std::size_t size, Clock::time_point deadline) {
  std::size_t got = 0;
  while (got < size) {
    ssize_t n = ::recv(fd, into + got, size - got, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) return {IoEnd::closed, 0, "recv"};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (auto ready = wait_for(fd, POLLIN, deadline); !ready) return ready;
      continue;
    }
    return failed("recv");
  }
  return {};
}

IoStatus accept_one(int listen_fd, Fd& into, Clock::time_point deadline) {
  for (;;) {
    if (auto ready = wait_for(listen_fd, POLLIN, deadline); !ready) return ready;
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      into = Fd(fd);
      return {};
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) return failed("accept");
  }
}

void tune_socket(int fd, int send_buffer) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (send_buffer > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer);
  }
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

Result<Endpoint> parse_endpoint(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return fail(ExitCode::usage, fmt::format("bad rendezvous endpoint '{}': {}", text, why));
  };
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("expected host:port");
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return bad("no host");
  auto port = parse_int(text.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) return bad("port must be 1..65535");
  return Endpoint{std::string(host), static_cast<int>(*port)};
}

std::string format_endpoint(std::string_view host, int port) {
  if (host.find(':') != std::string_view::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

} // namespace ddl::net
