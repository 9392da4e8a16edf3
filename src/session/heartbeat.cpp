// SPDX-License-Identifier: MIT
#include "src/session/heartbeat.hpp"

#include "rendezvous/client.hpp"

namespace ddl::session {

namespace {

constexpr Millis k_heartbeat_timeout{10'000};

} // namespace

Result<void> send_rank_heartbeat() {
  auto who = rendezvous::heartbeat_info_from_env();
  if (!who) {
    return fail(ExitCode::usage, "heartbeat: " + who.error().message + " (run it inside a rank of `ddl run`)");
  }
  return rendezvous::send_heartbeat(*who, k_heartbeat_timeout);
}

} // namespace ddl::session
