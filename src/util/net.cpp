// SPDX-License-Identifier: MIT
#include "src/util/net.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "src/util/text.hpp"


namespace ddl::rendezvous {
namespace {

struct AddrInfoList {
  addrinfo* head = nullptr;
  ~AddrInfoList() {
    if (head) freeaddrinfo(head);
  }
};

Result<void> resolve(const std::string& host, int port, bool passive, AddrInfoList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &out.head);
  if (rc != 0) {
    return fail(ExitCode::launch,
                fmt::format("cannot resolve rendezvous address '{}': {}", host, gai_strerror(rc)));
  }
  return {};
}

int milliseconds_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<long long>(left.count(), 1'000'000));
}

// Waits for `events` on fd until the deadline; false when it passed.
Result<void> wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    int wait_ms = milliseconds_left(deadline);
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (rc > 0) return {};
    if (rc == 0) return fail(ExitCode::rendezvous_timeout, "rendezvous: timed out");
    if (errno != EINTR) {
      return fail(ExitCode::launch, fmt::format("rendezvous: poll: {}", std::strerror(errno)));
    }
  }
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

Result<Fd> listen_tcp(const std::string& host, int port, int backlog) {
  AddrInfoList addresses;
  if (auto ok = resolve(host, port, false, addresses); !ok) return fail(ok.error());
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
  return fail(ExitCode::launch, fmt::format("rendezvous: cannot listen on {}: {}",
                                            format_endpoint(host, port), last_error));
}

Result<int> free_port_pair(const std::string& host) {
  for (int attempt = 0; attempt < 32; ++attempt) {
    auto first = listen_tcp(host, 0, 1);
    if (!first) {
      return fail(first.error());
    }
    const int port = local_port(first->get());
    if (port > 0 && port < 65535 && listen_tcp(host, port + 1, 1)) {
      return port;
    }
  }
  return fail(ExitCode::launch, "no free pair of ports for torch.master_port = 0 on " + host);
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

Result<Fd> dial_tcp(const std::string& host, int port, Clock::time_point deadline) {
  AddrInfoList addresses;
  if (auto ok = resolve(host, port, false, addresses); !ok) return fail(ok.error());
  std::string last_error = "no usable address";
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    for (addrinfo* ai = addresses.head; ai; ai = ai->ai_next) {
      Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!fd) {
        last_error = std::strerror(errno);
        continue;
      }
      if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
        last_error = std::strerror(errno);
        continue;
      }
      if (auto ready = wait_for(fd.get(), POLLOUT, deadline); !ready) {
        last_error = "timed out";
        continue;
      }
      int error = 0;
      socklen_t size = sizeof error;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
      if (error != 0) {
        last_error = std::strerror(error);
        continue;
      }
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    if (Clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  return fail(ExitCode::launch, fmt::format("rendezvous: cannot connect to {}: {}",
                                            format_endpoint(host, port), last_error));
}

Result<void> send_all(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto ready = wait_for(fd, POLLOUT, deadline); !ready) return ready;
      continue;
    }
    return fail(ExitCode::launch,
                fmt::format("rendezvous: connection lost: {}", std::strerror(errno)));
  }
  return {};
}

Result<void> recv_exact(int fd, char* into, std::size_t size, Clock::time_point deadline) {
  std::size_t got = 0;
  while (got < size) {
    ssize_t n = ::recv(fd, into + got, size - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) return fail(ExitCode::launch, "rendezvous: the server closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (auto ready = wait_for(fd, POLLIN, deadline); !ready) return ready;
      continue;
    }
    return fail(ExitCode::launch,
                fmt::format("rendezvous: connection lost: {}", std::strerror(errno)));
  }
  return {};
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

} // namespace ddl::rendezvous
