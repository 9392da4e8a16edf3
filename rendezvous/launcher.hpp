// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <optional>
#include <string>

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
  // for `ranks_are_local`), binds, starts.
  static Result<std::unique_ptr<JobRendezvous>> start(const JobSpec& job, const Plan& plan, bool ranks_are_local);

  const std::string& endpoint() const { return endpoint_; }  // DDL_RENDEZVOUS
  const std::string& token() const { return token_; }        // DDL_TOKEN; never print it
  // Before each attempt: attempt 0 keeps the fresh state, later ones reset it.
  void begin_attempt(int attempt);
  // The exit-4 rule broken: "rendezvous timed out after 5m: ranks 2, 5 never
  // joined" (ExitCode::rendezvous_timeout); nullopt while it holds.
  std::optional<Error> overdue() const;
  Server& server() { return server_; }

private:
  Server server_;
  std::string endpoint_;
  std::string token_;
  Millis timeout_{300'000};
};

} // namespace ddl::rendezvous
