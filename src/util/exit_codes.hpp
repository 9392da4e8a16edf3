// SPDX-License-Identifier: MIT
#pragma once

namespace ddl {

// ddl's own exit codes (DESIGN.md, "Gang semantics and exit codes").
// A failing rank's own code, or 128+signal, is passed through as is.
enum class ExitCode : int {
  ok = 0,
  usage = 2,              // usage or job-file error
  launch = 3,             // connect, auth, host key, command not found
  rendezvous_timeout = 4, // workers never joined
  stalled = 5,            // the watchdog found the gang stalled (issue 17)
  timeout = 124,          // the whole job ran past --timeout
  interrupted = 130,      // SIGINT
  terminated = 143,       // SIGTERM
};

inline int to_int(ExitCode code) { return static_cast<int>(code); }

} // namespace ddl
