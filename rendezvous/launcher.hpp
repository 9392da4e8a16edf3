// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "rendezvous/horovod_server.hpp"
#include "rendezvous/server.hpp"
#include "src/util/error.hpp"
#include "src/job/job.hpp"
#include "src/plan/plan.hpp"

namespace ddl::rendezvous {

// The rendezvous as `ddl run` uses it: one service for the whole job, a
// fresh token, and the exit-4 rule.
class JobRendezvous {
public:
  // Generates the token, resolves [rendezvous] address (see bind_address
  // for `ranks_are_local`), binds, starts; with `horovod_gloo`, Horovod's
  // HTTP rendezvous too, on the same address and a port of its own.
  // `token` non-empty: that one instead of a fresh one (an elastic restart
  // keeps the job's token, which ddl's output already redacts).
  // `on_heartbeat` gets each rank's HEARTBEAT (the hang watchdog's progress).
  static Result<std::unique_ptr<JobRendezvous>> start(const JobSpec& job, const Plan& plan, bool ranks_are_local,
                                                      bool horovod_gloo = false, const std::string& token = {},
                                                      std::function<void(int)> on_heartbeat = {});

  const std::string& endpoint() const { return endpoint_; }  // DDL_RENDEZVOUS
  const std::string& token() const { return token_; }        // DDL_TOKEN; never print it
  // Where Horovod's HTTP rendezvous is advertised ("" address and port 0
  // when it was not started).
  const std::string& horovod_address() const { return horovod_address_; }
  int horovod_port() const { return horovod_port_; }
  // Before each attempt: attempt 0 keeps the fresh state, later ones reset it.
  void begin_attempt(int attempt);
  // The exit-4 rule broken: "rendezvous timed out after 5m: ranks 2, 5 never
  // joined" (ExitCode::rendezvous_timeout); nullopt while it holds.
  std::optional<Error> overdue() const;
  Server& server() { return server_; }

private:
  Server server_;
  HorovodServer horovod_;
  std::string horovod_address_;
  int horovod_port_ = 0;
  std::string endpoint_;
  std::string token_;
  Millis timeout_{300'000};
};

} // namespace ddl::rendezvous
