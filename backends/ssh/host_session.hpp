// SPDX-License-Identifier: MIT
#pragma once

// A host's connection as the ssh backend uses it: channels that each run one
// command, driven by an ssh_event. Either this process's own SSH connection
// (ssh_open) or a connection a sweep's session broker holds for all of the
// sweep's trials (broker_client.hpp), whose channels are relayed over a unix
// socket. Not thread-safe, like a libssh session.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <libssh/libssh.h>

#include "src/util/duration.hpp"
#include "src/util/error.hpp"

namespace ddl {

// What a channel's command does, as libssh's channel callbacks say it.
class ChannelListener {
public:
  virtual ~ChannelListener() = default;
  virtual void data(std::string_view bytes, bool is_stderr) = 0;
  virtual void exit_status(int status) = 0;
  virtual void exit_signal(std::string_view name) = 0;  // "TERM"
  // The remote side closed the channel: the command is over.
  virtual void ended() = 0;
};

class HostChannel {
public:
  virtual ~HostChannel() = default;
  // Opens the channel and runs `command`; the error says which step failed.
  virtual Result<void> exec(const std::string& command) = 0;
  // False when the bytes could not all be sent.
  virtual bool write(std::string_view bytes) = 0;
  virtual void send_eof() = 0;
  virtual bool is_open() const = 0;
  // What the channel does from now on goes to `listener` (ddl's relay
  // taking over a shim's channel).
  virtual void relisten(ChannelListener& listener) = 0;
  // Stops passing the command's output on while `held` (its sender then
  // waits, and its status and end wait behind it), then passes it on again.
  // A trial's channels of the sweep's broker go on.
  virtual void hold_output(bool /*held*/) {}
};

class HostSession {
public:
  virtual ~HostSession() = default;
  // A channel not yet opened, reporting to `listener` (which outlives it).
  virtual std::unique_ptr<HostChannel> channel(ChannelListener& listener) = 0;
  // Polling `event` (ssh_event_dopoll) then drives the channels.
  virtual void add_to(ssh_event event) = 0;
  virtual void remove_from(ssh_event event) = 0;
  // The connection is closed or broken (as far as is known yet).
  virtual bool closed() const = 0;
  // The last error, for messages ("" when none).
  virtual std::string error() const = 0;
};
using HostSessionPtr = std::unique_ptr<HostSession>;

struct SshSessionFree {
  void operator()(ssh_session session) const;
};
using SshSessionPtr = std::unique_ptr<ssh_session_struct, SshSessionFree>;

// This process's own connection as a HostSession.
HostSessionPtr own_session(SshSessionPtr session);

// Polls `session` (its channels report as they do) until `done()`, the
// session closes, a stop (Ctrl-C, SIGTERM) or `timeout`.
void poll_until(HostSession& session, Millis timeout, const std::function<bool()>& done);

// The connection is closed or broken (as far as libssh knows yet).
bool ssh_session_closed(ssh_session session);

} // namespace ddl
