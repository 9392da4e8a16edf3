// SPDX-License-Identifier: MIT
#include "rendezvous/launcher.hpp"

#include "rendezvous/address.hpp"
#include "rendezvous/protocol.hpp"

#include <algorithm>

namespace ddl::rendezvous {

namespace {

// The most ranks on one host: each holds at most one request open at a time.
int max_local_size(const Plan& plan) {
  int most = 1;
  for (const auto& slot : plan.ranks) most = std::max(most, slot.local_size);
  return most;
}

} // namespace

Result<std::unique_ptr<JobRendezvous>> JobRendezvous::start(const JobSpec& job, const Plan& plan,
                                                            bool ranks_are_local, bool horovod_gloo,
                                                            const std::string& given_token,
                                                            std::function<void(int)> on_heartbeat) {
  auto address = rendezvous_address(job, plan, ranks_are_local);
  if (!address) return fail(address.error());
  auto token = given_token.empty() ? generate_token() : Result<std::string>(given_token);
  if (!token) return fail(token.error());
  auto rendezvous = std::make_unique<JobRendezvous>();
  ServerOptions options;
  options.bind_address = address->bind;
  options.advertise_address = address->advertise;
  options.port = job.rendezvous.port;
  options.token = *token;
  options.world_size = plan.world_size;
  options.job = job.name;  // what ranks get as DDL_JOB
  options.on_heartbeat = std::move(on_heartbeat);
  auto endpoint = rendezvous->server_.start(options);
  if (!endpoint) return fail(endpoint.error());
  rendezvous->endpoint_ = *endpoint;
  if (horovod_gloo) {
    HorovodServerOptions horovod;
    horovod.bind_address = address->bind;
    horovod.scope_sizes = horovod_scope_sizes(plan);
    horovod.allowed_peers = horovod_peer_addresses(plan);
    horovod.max_connections = std::min(plan.world_size * 3 + 64, 60000);
    horovod.max_per_address = 2 * max_local_size(plan) + 16;
    auto port = rendezvous->horovod_.start(horovod);
    if (!port) return fail(port.error());
    rendezvous->horovod_address_ = address->advertise;
    rendezvous->horovod_port_ = *port;
  }
  rendezvous->token_ = std::move(*token);
  rendezvous->timeout_ = job.rendezvous.timeout;
  return rendezvous;
}

void JobRendezvous::begin_attempt(int attempt) {
  if (attempt > 0) {
    server_.reset();
    horovod_.clear();
  }
}

std::optional<Error> JobRendezvous::overdue() const {
  auto missing = server_.overdue_ranks(timeout_);
  if (missing.empty()) return std::nullopt;
  return Error{ExitCode::rendezvous_timeout, overdue_message(timeout_, missing)};
}

} // namespace ddl::rendezvous
