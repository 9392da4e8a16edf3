// SPDX-License-Identifier: MIT
#pragma once

#include <thread>

#include <functional>

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "src/util/duration.hpp"
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

// SIGUSR1, SIGUSR2, SIGCONT and SIGTSTP, which the supervisor forwards to
// every rank (as mpirun does), as bytes on a pipe of their own: they never
// stop a phase (stop::requested() stays false). Installed by the supervisor
// (before it, ddl keeps their default actions); install once.
class ForwardedSignals {
public:
  static Result<void> install();
  static int fd();  // -1 before install()
  // The signals received since the last call, in order.
  static std::vector<int> take();
};

// The process-wide stop token (DESIGN.md: Ctrl-C and --timeout work in every
// phase). A command arms it first thing; every blocking wait before the
// supervisor (job load, host discovery, GPU probe, ssh connect and
// authentication, preflight checks, helper programs) polls it and ends its
// phase with stop::error(): 130 after SIGINT, 143 after SIGTERM, 129 after
// SIGHUP, 124 once the job's deadline (timeout after arm()) passed. The
// supervisor reads the signals themselves through SignalPipe::take().
namespace stop {

using Clock = std::chrono::steady_clock;

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread: main() does it
// first thing, before any thread starts, so that one that comes before
// arm() waits (pending) instead of being lost or killing ddl half-way.
void hold_signals();
// Unblocks them: the command does not arm (their default actions apply),
// or arm() has installed the handlers.
void release_signals();
// Installs SignalPipe, starts the job clock, then release_signals(): a
// signal held since the start reaches the handler now. Idempotent.
Result<void> arm();
// The whole job's deadline: `timeout` after arm(); nullopt clears it.
void set_timeout(std::optional<Millis> timeout);
std::optional<Clock::time_point> deadline();
// The first SIGINT, SIGTERM or SIGHUP since arm(); 0 when none came.
int first_signal();
// A signal came or the deadline passed.
bool requested();
// The error that ends a phase cut short by requested(): its exit code, and
// "interrupted by SIGINT while PHASE" or "timed out after 5s (--timeout) while PHASE".
Error error(std::string_view phase);
// True for an Error that error() made (its code is 124 or 128+signal).
bool is_stop_error(const Error& error);
// How long a poll may sleep: until the deadline, at most `cap_ms`.
int wait_ms(int cap_ms);
// Readable once a signal came, for poll sets; never read it (the supervisor does).
int fd();

} // namespace stop

// A thread started with every signal blocked: signals are for the thread
// that reads them (the supervisor's), never a helper thread of ddl.
std::thread thread_without_signals(std::function<void()> body);

} // namespace ddl
