// SPDX-License-Identifier: MIT
#pragma once

// A host's connection and its shim, kept from the first probe to the
// launch: every probe (route, ports, topology, GPUs) is a request to the
// same shim, whose channel then carries the host's first rank. One
// handshake and one login shell per host.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/ssh/relay_session.hpp"
#include "backends/ssh/shim_channel.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"  // SshSection

namespace ddl {

// One connection to a host: open, or why it could not be made. `relay`:
// ddl's relay over it, kept from an earlier launch (the preflight's check)
// for the next; the shim is then the relay's command, not a login shell.
// `shim` (declared after them, so freed first) waits for its next request
// or a rank's check block; null when none was started or it ended.
struct SshConnection {
  HostSessionPtr session;
  std::unique_ptr<RelaySession> relay;
  std::unique_ptr<ShimChannel> shim;
  std::string error;

  // A kept relay that has ended since is dropped, with its shim.
  void drop_ended_relay();
  // Where a shim opens: the kept relay while it lives, else the connection.
  HostSession& shim_session();
};

// Runs `script` (sh, `args` as $1...) under the connection's shim:
// connects first when it has no session (on failure `kept.error` says why
// and the session stays null: the host is unreachable), starts the shim
// when it has none, else asks the waiting one. Bounded by the remote
// answer timeout; a shim that refuses this ddl's protocol is an error
// naming both versions. ExitCode::launch.
Result<ShimAnswer> ask_shim(const SshSection& ssh, const Host& host, SshConnection& kept, std::string_view script,
                            const std::vector<std::string>& args = {});

} // namespace ddl
