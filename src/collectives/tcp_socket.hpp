// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "src/util/net.hpp"
#include "src/util/error.hpp"

namespace ddl::coll {

using Fd = rendezvous::Fd;

// A listening TCP socket on `address` (IPv4 or IPv6 literal), port 0 = any.
struct Listener {
  Fd fd;
  std::string address;
  int port = 0;
};
Result<Listener> listen_tcp(const std::string& address, int port = 0, int backlog = 64);

// The local address the kernel would use to reach `host` (no packet is sent);
// loopback names give 127.0.0.1.
Result<std::string> local_address_towards(const std::string& host);

// Connects, retrying refused connections until `deadline`.
Result<Fd> connect_tcp(const std::string& host, int port,
                       std::chrono::steady_clock::time_point deadline);
// Accepts one connection before `deadline`.
Result<Fd> accept_tcp(int listen_fd, std::chrono::steady_clock::time_point deadline);

// Blocking exact-length I/O on a socket (used before the fd goes non-blocking).
Result<void> write_all(int fd, const void* data, std::size_t bytes);
Result<void> read_all(int fd, void* data, std::size_t bytes,
                      std::chrono::steady_clock::time_point deadline);

// TCP_NODELAY; SO_SNDBUF set to `send_buffer` (the kernel caps it at
// net.core.wmem_max). SO_RCVBUF is left alone so receive autotuning stays on.
void tune_socket(int fd, int send_buffer);
void set_nonblocking(int fd);

// "host:port" and "[v6]:port" both ways.
std::string join_host_port(const std::string& host, int port);
bool split_host_port(const std::string& text, std::string& host, int& port);

} // namespace ddl::coll
