// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

#include "src/util/error.hpp"

namespace ddl {

// Turns SIGINT, SIGTERM and SIGHUP into bytes on a pipe that an event loop
// polls (the self-pipe trick), and ignores SIGPIPE so that a closed stdout
// is an EPIPE error instead of ddl's death. Process-wide; install once.
class SignalPipe {
public:
  static Result<void> install();
  // The read end (non-blocking, close-on-exec); -1 before install().
  static int fd();
  // The signals received since the last call, in order.
  static std::vector<int> take();
  // Restores the default actions (for tests).
  static void uninstall();
};

} // namespace ddl
