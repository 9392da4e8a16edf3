// SPDX-License-Identifier: MIT
#pragma once

// `ddl worker ssh-relay`: ddl's relay on a remote host, so that all the
// ranks of a host share one login shell. The launcher's shim (whose login
// shell ran it) execs it on the host's connection; from then on its stdin and
// stdout carry the frames of broker_wire.hpp, one channel per rank:
//   relay -> launcher   first `ready` (channel 0, JSON {"version": N}, N the
//                       frame protocol's broker::k_protocol);
//                       opened / open_failed, out, err, exit_status,
//                       exit_signal, closed, as the broker sends them
//   launcher -> relay   open (bytes: a command, run as `/bin/sh -c COMMAND`
//                       in a session of its own, as sshd runs an exec
//                       request, with the relay's environment and working
//                       directory, i.e. the login shell's), data, eof, close;
//                       data on channel 0 is a beat (the launcher is there)
// A command's exit status (or signal) is sent when it is reaped, `closed`
// once its stdout and stderr reach EOF too (at most k_relay_drain after it
// ended: a background process holding them open does not hold the channel).
// EOF on the relay's stdin (the launcher closed the channel, or died), or
// SIGTERM/SIGHUP, closes every command's stdin: the shims end their ranks as
// they do when their own channel closes. The relay exits once no command is
// left, and also after k_relay_idle without a frame and without a command (a
// host cut off from the launcher never sees EOF).

#include "src/util/duration.hpp"

namespace ddl {

inline constexpr Millis k_relay_drain{2'000};
inline constexpr Millis k_relay_idle{15'000};

// Serves the frames on fds 0 and 1 until the end above; the exit code.
// `idle` in place of k_relay_idle (tests).
int run_ssh_relay(Millis idle = k_relay_idle);

} // namespace ddl
