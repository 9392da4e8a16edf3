// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/protocol.hpp"
#include "src/util/error.hpp"
#include "src/job/job.hpp"

namespace ddl::rendezvous {

struct ServerOptions {
  std::string bind_address = "127.0.0.1";  // where it listens; never 0.0.0.0 unless asked
  std::string advertise_address;           // what workers dial; "" = bind_address
  int port = 0;                            // 0: any free port (the bound one is reported)
  std::string token;                       // the job secret (its text is the HMAC key)
  int world_size = 1;
  std::string job;
  Millis handshake_timeout{3'000};         // a connection must join within this
  // Connections not yet joined, at most world_size + spare_connections at once;
  // beyond that the oldest one of the address holding the most is dropped, so
  // idle strays can never lock the real ranks out.
  int spare_connections = 64;
  std::size_t max_message = k_max_frame;
  // Replies queued for one connection that does not read them; beyond this it
  // is dropped (a client must read each reply before its next request).
  std::size_t max_queued_bytes = k_max_frame + (64u << 10);
  std::size_t max_queued_frames = 64;
  std::size_t max_store_bytes = 256u << 20;  // all key/value pairs together
  // Called (on the server's thread) for each authenticated HEARTBEAT.
  std::function<void(int rank)> on_heartbeat;
};

// The rendezvous service of one job, on its own thread (epoll, non-blocking
// sockets). All methods are thread-safe.
class Server {
public:
  Server();
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, starts the thread, returns the endpoint workers dial ("host:port").
  // A busy port is an error naming addr:port (ExitCode::launch).
  Result<std::string> start(const ServerOptions& options);
  // Closes every connection and ends the thread. Idempotent.
  void stop();
  // A new attempt of the gang: drops every connection and all state, keeps
  // the listening socket (so DDL_RENDEZVOUS stays valid).
  void reset();

  std::string endpoint() const;
  // Ranks that have not joined (in this attempt), in order.
  std::vector<int> missing_ranks() const;
  // When the first rank joined in this attempt; nullopt before that.
  std::optional<std::chrono::steady_clock::time_point> first_join() const;
  // The exit-4 rule: once any rank has joined, all must join within
  // `timeout`. Returns the ranks that never joined when that has been broken.
  std::vector<int> overdue_ranks(Millis timeout) const;
  // A value a worker stored with SET.
  std::optional<std::string> value(std::string_view key) const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

// "rendezvous timed out after 5m: ranks 2, 5 never joined"
std::string overdue_message(Millis timeout, const std::vector<int>& ranks);

} // namespace ddl::rendezvous
