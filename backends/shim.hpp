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
//      every period once the payload is sent (and, for a rank that reads
//      ddl's stdin, shim_stdin_frame(BYTES) and k_shim_stdin_eof_line): after k_shim_heartbeat_misses
//      periods without one (the host is cut off from the launcher, which
//      never gives EOF) the shim ends the rank the same way too;
//   4. its stderr starts with "ddl-shim: pid N\n" (ShimStderr strips it);
//   5. it exits with the command's status; a command killed by signal N
//      kills the shim with N too (core dumps off), so ssh reports an
//      exit-signal; where only a status is seen, it is 128+N.
// Before the payload (or its check block), any number of probe requests
// (shim_probe_request): "probe VERSION LENGTH\n" and a sh text. The shim
// runs each in a subshell (stdin /dev/null) and answers on stderr with
// "ddl-shim: a LINE" for each line of its output (stdout and stderr) and
// "ddl-shim: answered STATUS" at its end; a VERSION other than its own
// (k_shim_protocol) makes it say "ddl-shim: protocol ITS_OWN" and exit 125.
// An exec request, "exec VERSION LENGTH\n" and a sh text, is run in the
// shim's own shell with the channel as its stdin: it may exec a program that
// takes the channel over (ddl's relay, backends/ssh/relay_server.hpp); if it
// returns, the shim says "ddl-shim: answered STATUS" and reads on.
// The launcher's probes of a host (route, interface, ports, topology, GPUs,
// ddl version) and its ranks thus share one exec, one login shell.
// Shim exit codes of its own: 125 bad payload or protocol, 126 workdir
// missing, 127 command not found.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"
#include "src/job/job.hpp"

namespace ddl {

// The version of the shim's stdin protocol, sent with each probe request.
inline constexpr int k_shim_protocol = 3;

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
  bool reads_stdin = false;       // its stdin is fed by shim_stdin_frame; else /dev/null
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

// A probe request: `script` run by sh with `args` as $1... (NUL-free, else
// ExitCode::usage).
Result<std::string> shim_probe_request(std::string_view script, const std::vector<std::string>& args);

// An exec request (see above): `script` with `args` as $1..., run by the
// shim's shell itself (ExitCode::usage on a NUL).
Result<std::string> shim_exec_request(std::string_view script, const std::vector<std::string>& args);

// Optional, before the payload: the bytes of a check block. The shim then
// checks that `workdir` exists and `program` is found (exit 126 or 127
// when not), writes "ddl-shim: ready\n" on stderr and waits for the
// payload; EOF instead ends it quietly (exit 0). The ssh backend opens every
// rank's channel this way in prepare(), so that starting is one write.
Result<std::string> shim_check_payload(const std::string& workdir, const std::string& program);

// "INT\n" for SIGINT; likewise HUP QUIT TERM KILL USR1 USR2 CONT STOP TSTP;
// nullopt for a signal the shim does not forward.
std::optional<std::string> shim_signal_line(int signo);

// The watchdog's dump, "dump TOOL SECONDS" (stack_dump_line): the shim runs
// the stack dumper on the rank in a session of its own, its output on the
// rank's stderr; the session is killed when the rank exits.

// Bytes for the rank's stdin (ShimJob::reads_stdin), as one frame for the
// shim's stdin: "in N\n" and the N bytes; k_shim_stdin_eof_line ends them
// (the rank reads EOF). A shim whose rank does not read stdin drops them.
std::string shim_stdin_frame(std::string_view bytes);
inline constexpr std::string_view k_shim_stdin_eof_line = "ineof\n";

// Ends the rank like EOF does, but keeps the channel for its exit status.
inline constexpr std::string_view k_shim_stop_line = "stop\n";

// A probe request's answer: its exit status and output.
struct ShimAnswer {
  int status = -1;
  std::string out;
};

// Takes the marker lines ("ddl-shim: ready", a probe's answer, "ddl-shim:
// pid N") off the front of a rank's stderr.
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
  // The last probe request was answered; take_answer() takes it.
  bool answered() const { return answered_.has_value(); }
  ShimAnswer take_answer();
  // The shim's protocol version, when it refused the launcher's.
  const std::optional<std::string>& protocol() const { return protocol_; }

private:
  bool take_probe_marker(std::string_view what);
  std::string head_;
  std::optional<long> pid_;
  bool decided_ = false;
  bool ready_ = false;
  std::string answer_;
  std::optional<int> answered_;
  std::optional<std::string> protocol_;
};

} // namespace ddl
