// SPDX-License-Identifier: MIT
#include "src/collectives/tcp_socket.hpp"

#include <cerrno>
#include <cstring>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/util/text.hpp"

namespace ddl::coll {

namespace {

std::string errno_text() { return std::strerror(errno); }

int millis_left(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left.count(), 1'000'000)));
}

Result<addrinfo*> resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE | AI_NUMERICHOST : 0;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    return fail(ExitCode::launch, "cannot resolve '" + host + "': " + ::gai_strerror(rc));
  }
  return found;
}

std::string numeric_host(const sockaddr* addr, socklen_t len, int* port) {
  char host[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  if (::getnameinfo(addr, len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return {};
  }
  if (port != nullptr) {
    *port = std::atoi(serv);
  }
  return host;
}

} // namespace

std::string join_host_port(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

bool split_host_port(const std::string& text, std::string& host, int& port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return false;
  }
  host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  auto value = parse_int(std::string_view(text).substr(colon + 1));
  if (!value || *value > 65535) {
    return false;
  }
  port = static_cast<int>(*value);
  return true;
}

Result<Listener> listen_tcp(const std::string& address, int port, int backlog) {
  auto found = resolve(address, port, true);
  if (!found) {
    return fail(found.error());
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(*found, ::freeaddrinfo);
  Fd fd(::socket(list->ai_family, list->ai_socktype | SOCK_CLOEXEC, 0));
  if (!fd) {
    return fail(ExitCode::launch, "socket: " + errno_text());
  }
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), list->ai_addr, list->ai_addrlen) != 0) {
    return fail(ExitCode::launch, "cannot listen on " + join_host_port(address, port) + ": " +
                                      errno_text());
  }
  if (::listen(fd.get(), backlog) != 0) {
    return fail(ExitCode::launch, "listen: " + errno_text());
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  Listener listener;
  listener.address = numeric_host(reinterpret_cast<sockaddr*>(&bound), len, &listener.port);
  listener.fd = std::move(fd);
  return listener;
}

Result<std::string> local_address_towards(const std::string& host) {
  if (host.empty() || host == "localhost" || host.starts_with("127.")) {
    return std::string("127.0.0.1");
  }
  auto found = resolve(host, 9, false);
  if (!found) {
    return fail(found.error());
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(*found, ::freeaddrinfo);
  Fd fd(::socket(list->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), list->ai_addr, list->ai_addrlen) != 0) {
    return fail(ExitCode::launch, "no route to '" + host + "': " + errno_text());
  }
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len);
  return numeric_host(reinterpret_cast<sockaddr*>(&local), len, nullptr);
}

Result<Fd> connect_tcp(const std::string& host, int port,
                       std::chrono::steady_clock::time_point deadline) {
  std::string last_error;
  while (true) {
    auto found = resolve(host, port, false);
    if (!found) {
      return fail(found.error());
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(*found, ::freeaddrinfo);
    for (addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
      Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0));
      if (fd && ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) {
        return fd;
      }
      last_error = errno_text();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail(ExitCode::launch,
                  "cannot connect to " + join_host_port(host, port) + ": " + last_error);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<Fd> accept_tcp(int listen_fd, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    pollfd pfd{listen_fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, millis_left(deadline));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return fail(ExitCode::launch, "timed out waiting for the ring neighbour to connect");
    }
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      return Fd(fd);
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
      return fail(ExitCode::launch, "accept: " + errno_text());
    }
  }
}

Result<void> write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return fail(ExitCode::launch, "send: " + errno_text());
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return {};
}

Result<void> read_all(int fd, void* data, std::size_t bytes,
                      std::chrono::steady_clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, millis_left(deadline));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return fail(ExitCode::launch, "timed out reading from a ring neighbour");
    }
    ssize_t n = ::recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return fail(ExitCode::launch,
                  n == 0 ? std::string("ring neighbour closed the connection") : "recv: " + errno_text());
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return {};
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

} // namespace ddl::coll
