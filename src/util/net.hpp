// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "src/util/error.hpp"

namespace ddl::rendezvous {

using Clock = std::chrono::steady_clock;

// An owned file descriptor.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release();
  void reset();
  explicit operator bool() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

// A non-blocking, CLOEXEC listening TCP socket on host:port (port 0: any free).
// A busy port is an error naming addr:port.
Result<Fd> listen_tcp(const std::string& host, int port, int backlog);
int local_port(int fd);

// A port that is free on this machine now, with the next one free too
// (torch's store takes it and JAX's coordinator the next). Best effort: the
// port is released before the ranks bind it.
Result<int> free_port_pair(const std::string& host);

// A connected non-blocking CLOEXEC socket; a refused connection is retried
// until `deadline`.
Result<Fd> dial_tcp(const std::string& host, int port, Clock::time_point deadline);

// Blocking I/O on a non-blocking socket, bounded by `deadline`.
// Errors: ExitCode::rendezvous_timeout past the deadline, ExitCode::launch
// when the peer closes or the socket fails.
Result<void> send_all(int fd, std::string_view bytes, Clock::time_point deadline);
Result<void> recv_exact(int fd, char* into, std::size_t size, Clock::time_point deadline);

// "host:port" or "[v6addr]:port" -> host and port.
struct Endpoint {
  std::string host;
  int port = 0;
};
Result<Endpoint> parse_endpoint(std::string_view text);
std::string format_endpoint(std::string_view host, int port);

} // namespace ddl::rendezvous
