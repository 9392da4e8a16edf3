// SPDX-License-Identifier: MIT
#pragma once

// Horovod's gloo rendezvous over HTTP, served beside the job rendezvous on a
// port of its own (HOROVOD_GLOO_RENDEZVOUS_ADDR/PORT). Horovod's client sends
// no credentials, so it answers only the ranks' hosts (allowed_peers; others
// get 403 and are closed at once); it holds only what the ranks put there
// (addresses of gloo pairs), for the life of the job. Bounded: a request's
// head must arrive within header_timeout and the whole of it within
// request_timeout (else 408); at most max_per_address connections from one
// address and max_connections in all: past either, the oldest connection
// still sending its request, of the address holding the most, is closed, so
// that a peer holding half-sent requests never locks the ranks out; one
// request per connection; heads and bodies capped (HttpLimits, else 413);
// the store capped (else 507).

#include <memory>
#include <set>
#include <string>

#include "rendezvous/horovod_store.hpp"
#include "rendezvous/http_request.hpp"
#include "src/plan/plan.hpp"
#include "src/util/duration.hpp"
#include "src/util/error.hpp"

namespace ddl::rendezvous {

struct HorovodServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0: any free port
  HorovodStore::ScopeSizes scope_sizes;
  HttpLimits limits;
  // Numeric addresses a connection may come from; empty: any (tests).
  std::set<std::string> allowed_peers;
  int max_connections = 1024;
  int max_per_address = 64;
  Millis header_timeout{2'000};
  Millis request_timeout{10'000};
  std::size_t max_store_bytes = 64u << 20;
};

// The addresses Horovod's ranks of `plan` connect from: each host's own
// (resolved), and for hosts that are this machine loopback and this
// machine's addresses.
std::set<std::string> horovod_peer_addresses(const Plan& plan);

class HorovodServer {
public:
  HorovodServer();
  ~HorovodServer();  // stop()
  HorovodServer(const HorovodServer&) = delete;
  HorovodServer& operator=(const HorovodServer&) = delete;

  // Binds and starts its thread; returns the bound port.
  Result<int> start(const HorovodServerOptions& options);
  void stop();
  // A new attempt: every value dropped, the port kept.
  void clear();

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace ddl::rendezvous
