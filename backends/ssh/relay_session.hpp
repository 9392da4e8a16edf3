// SPDX-License-Identifier: MIT
#pragma once

// The launcher's side of ddl's relay on a host (relay_server.hpp): a
// FrameSession (frame_session.hpp) whose pipe is one channel of the host's
// connection. The ranks of a host then share the one login shell that ran
// the shim of its probes, where each would otherwise run its own (with the
// user's .bashrc, conda, modules).

#include <memory>
#include <string>

#include "backends/ssh/frame_session.hpp"
#include "backends/ssh/shim_channel.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"  // SshSection
#include "src/util/duration.hpp"

namespace ddl {

// The relay's session: its channels are the relay's commands, opened
// without waiting for each answer; beat() keeps a relay kept between
// launches from ending idle. Its error() says how the relay ended.
using RelaySession = FrameSession;

// `shim`, a shim of `connection` waiting for its next request, execs the
// relay at `ddl_path` (which must be this ddl's version: check first), and
// the relay's greeting is awaited (bounded by `timeout`). On failure the
// shim is gone: ExitCode::launch naming why.
Result<std::unique_ptr<RelaySession>> start_relay(HostSession& connection, std::unique_ptr<ShimChannel> shim,
                                                  const std::string& ddl_path, Millis timeout);

struct SshConnection;

// ddl's relay over `connection`'s shim (one is started where it has none),
// where the host has this ddl at remote_ddl_path(ssh); null (the shim kept)
// where it has not. An error where the shim or the relay failed.
Result<std::unique_ptr<RelaySession>> start_relay_where_same_ddl(const SshSection& ssh, const Host& host,
                                                                  SshConnection& connection);

} // namespace ddl
