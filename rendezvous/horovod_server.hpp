// SPDX-License-Identifier: MIT
#pragma once

// Horovod's gloo rendezvous over HTTP, served beside the job rendezvous on a
// port of its own (HOROVOD_GLOO_RENDEZVOUS_ADDR/PORT). Like horovodrun's, it
// has no authentication: it holds only what the ranks put there (addresses
// of gloo pairs), for the life of the job. Bounded: at most max_connections
// open at once (more are answered 503 and closed), one request per
// connection, which must arrive within request_timeout (else 408), heads and
// bodies capped (HttpLimits, else 413), the store capped (else 507).

#include <memory>
#include <string>

#include "rendezvous/horovod_store.hpp"
#include "rendezvous/http_request.hpp"
#include "src/util/duration.hpp"
#include "src/util/error.hpp"

namespace ddl::rendezvous {

struct HorovodServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0: any free port
  HorovodStore::ScopeSizes scope_sizes;
  HttpLimits limits;
  int max_connections = 1024;
  Millis request_timeout{10'000};
  std::size_t max_store_bytes = 64u << 20;
};

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
