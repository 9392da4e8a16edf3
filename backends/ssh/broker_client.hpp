// SPDX-License-Identifier: MIT
#pragma once

// A trial's side of the sweep's session broker (broker_wire.hpp): a
// FrameSession (frame_session.hpp) over a unix socket, whose channels the
// broker opens on its own connection to the host.

#include <string>

#include "backends/ssh/host_session.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"  // SshSection
#include "src/util/duration.hpp"

namespace ddl {

// Asks the broker at `ssh.broker` for `host`: the session, or the broker's
// reason it cannot reach the host (its own connection's error, as
// ssh_connect_direct words it), or that the broker cannot be reached. The
// broker answers (the greeting, each channel's open) within
// `answer_timeout`. ExitCode::launch.
Result<HostSessionPtr> broker_open(const SshSection& ssh, const Host& host, Millis answer_timeout);

} // namespace ddl
