// SPDX-License-Identifier: MIT
#pragma once

// The remote-worker contract shared by the ssh and kubernetes backends
// (DESIGN.md "Remote workers"): a fixed POSIX sh program is the only command
// line; everything about the rank travels on its stdin, so no value ever
// appears in any argv. Protocol, launcher side:
//   1. start `sh -c shim_script()` (ssh: shim_ssh_command()), stdin a pipe;
//   2. write shim_payload(...) on its stdin, and keep stdin open;
//   3. write shim_signal_line(SIG) to forward a signal to the rank's process
//      group, k_shim_stop_line (or close stdin) to end it: TERM, then KILL
//      after grace. EOF of stdin (the launcher died) ends it the same way;
//      with a heartbeat period (ShimJob::heartbeat), write k_shim_beat_line
//      every period once the payload is sent: after k_shim_heartbeat_misses
//      periods without one (the host is cut off from the launcher, which
//      never gives EOF) the shim ends the rank the same way too;
//   4. its stderr starts with "ddl-shim: pid N\n" (ShimStderr strips it);
//   5. it exits with the command's status; a command killed by signal N
//      kills the shim with N too (core dumps off), so ssh reports an
//      exit-signal; where only a status is seen, it is 128+N.
// Shim exit codes of its own: 125 bad payload, 126 workdir missing,
// 127 command not found.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"
#include "src/job/job.hpp"

namespace ddl {

// The fixed sh program (no single quote in it).
std::string_view shim_script();

// The remote command line for ssh: "exec sh -c '<script>'". The login shell
// runs it; this form is the same in sh, bash, zsh and fish.
std::string shim_ssh_command();

// What the shim needs to start one rank.
struct ShimJob {
  EnvList env;                    // exported before the command starts
  std::string workdir;            // "" = the login directory
  std::vector<std::string> argv;  // not empty
  Millis grace{10'000};           // between TERM and KILL when stopping
  Millis heartbeat{0};            // k_shim_heartbeat_period for ranks; 0: none
};

// Ranks get a heartbeat line every period; the shim ends the rank after
// k_shim_heartbeat_misses of its periods pass without one, i.e. after
// (misses - 1) to misses periods of silence: 10 to 15 s.
inline constexpr Millis k_shim_heartbeat_period{5'000};
inline constexpr int k_shim_heartbeat_misses = 3;
inline constexpr std::string_view k_shim_beat_line = "beat\n";

// The bytes for the shim's stdin: "<length>\n" and a sh text that sets the
// workdir and grace, defines a function of `export NAME='value'` lines and
// sets the positional parameters to argv (every value quoted by
// shell_quote). A NUL in any value, a bad env name or an empty argv is an
// error (ExitCode::usage).
Result<std::string> shim_payload(const ShimJob& job);

// Optional, before the payload: the bytes of a check block. The shim then
// checks that `workdir` exists and `program` is found (exit 126 or 127
// when not), writes "ddl-shim: ready\n" on stderr and waits for the
// payload; EOF instead ends it quietly (exit 0). The ssh backend opens every
// rank's channel this way in prepare(), so that starting is one write.
Result<std::string> shim_check_payload(const std::string& workdir, const std::string& program);

// "INT\n" for SIGINT; likewise HUP QUIT TERM KILL USR1 USR2 CONT STOP TSTP;
// nullopt for a signal the shim does not forward.
std::optional<std::string> shim_signal_line(int signo);

// The watchdog's py-spy dump: the shim runs `py-spy dump --pid PID` of the
// rank in the background, its output on the rank's stderr (or a line that
// py-spy is not installed there).
inline constexpr std::string_view k_shim_dump_line = "dump\n";

// Ends the rank like EOF does, but keeps the channel for its exit status.
inline constexpr std::string_view k_shim_stop_line = "stop\n";

// Takes the "ddl-shim: ready" and "ddl-shim: pid N" lines off the front of
// a rank's stderr.
class ShimStderr {
public:
  // Returns the bytes to pass on (the marker line removed).
  std::string feed(std::string_view bytes);
  // Whatever is held back (call at EOF).
  std::string flush();
  // The rank's process (group) id once the marker was seen.
  std::optional<long> pid() const { return pid_; }
  // True once the pid line was seen: what follows is the command's.
  bool decided() const { return decided_; }
  // The shim passed its check block and waits for the payload.
  bool ready() const { return ready_; }

private:
  std::string head_;
  std::optional<long> pid_;
  bool decided_ = false;
  bool ready_ = false;
};

} // namespace ddl
