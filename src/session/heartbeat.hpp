// SPDX-License-Identifier: MIT
// `ddl heartbeat` below its command line: from inside a rank, tells the hang
// watchdog ([watchdog]) that this rank made progress, through the job's
// rendezvous (DDL_RENDEZVOUS and the rank's env).
#pragma once

#include "src/util/error.hpp"

namespace ddl::session {

// Sent and taken; ExitCode::usage outside a rank, the rendezvous' error when
// it cannot be reached or refuses it.
Result<void> send_rank_heartbeat();

} // namespace ddl::session
