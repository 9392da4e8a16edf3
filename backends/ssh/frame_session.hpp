// SPDX-License-Identifier: MIT
#pragma once

// A host's session whose channels are carried as frames (broker_wire.hpp)
// over one byte pipe: ddl's relay on a host (relay_session.hpp: the pipe is
// a channel of the host's connection) and a sweep's session broker
// (broker_client.hpp: the pipe is a unix socket). The channels, the greeting
// and the frames' dispatch are this one class; a pipe only moves bytes and
// says why it ended. Not thread-safe, like a libssh session.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/ssh/broker_wire.hpp"
#include "backends/ssh/host_session.hpp"
#include "src/util/duration.hpp"
#include "src/util/error.hpp"

namespace ddl {

class FrameSession;
class FrameChannel;

// The byte pipe under a FrameSession: what it reads goes to the session
// (deliver), when polled through an ssh_event.
class FramePipe {
public:
  virtual ~FramePipe() = default;
  // False when the bytes could not all be sent.
  virtual bool send(std::string_view bytes) = 0;
  // Polling `event` (ssh_event_dopoll) then reads the pipe.
  virtual void add_to(ssh_event event) = 0;
  virtual void remove_from(ssh_event event) = 0;
  virtual bool ended() const = 0;
  // Why it ended (or what its own connection says), for messages; "" when none.
  virtual std::string error() const = 0;
  // The peer sent what is not a frame: the pipe ends, saying so in its error().
  virtual void malformed() = 0;
  // The peer, as the subject of a sentence: "ddl's relay",
  // "the sweep's session broker (PATH)".
  virtual std::string name() const = 0;

  void deliver_to(FrameSession& session) { session_ = &session; }

protected:
  // Bytes read: to the session.
  void deliver(std::string_view bytes);

private:
  FrameSession* session_ = nullptr;
};

// How a session's channels open and whose window they hold.
struct FrameChannelMode {
  // exec waits for `opened` and fails with open_failed's reason (the broker,
  // which opens each channel on its own connection first); else exec returns
  // at once, what is written meanwhile follows the open frame, and
  // open_failed ends the channel with the reason on its stderr (the relay:
  // no round trip per rank).
  bool exec_waits = false;
  // hold_output sends hold and release (the relay). A trial's channels of the
  // broker are held by the broker itself, which takes no hold from a trial.
  bool holds_output = false;
};

class FrameSession final : public HostSession {
public:
  // Channels are answered within `answer_timeout` (the greeting, and each
  // open where the mode waits).
  FrameSession(std::unique_ptr<FramePipe> pipe, FrameChannelMode mode, Millis answer_timeout);
  // Its channels must be freed first. The pipe then ends (the relay's
  // channel gets EOF: the relay closes every command's stdin).
  ~FrameSession() override;
  FrameSession(const FrameSession&) = delete;
  FrameSession& operator=(const FrameSession&) = delete;

  // Sends `hello` (when given) on channel 0 and awaits the peer's answer:
  // `ready` with {"version": broker::k_protocol}, or `refused` with why. An
  // error names both versions where they differ; stop::error(doing) at a
  // stop; else ExitCode::launch.
  Result<void> greet(const std::optional<std::string>& hello, std::string_view doing);
  // Tells the peer the launcher is there (data on channel 0): ddl's relay
  // ends after k_relay_idle of silence without commands.
  void beat() { send(broker::Type::data, 0); }

  std::unique_ptr<HostChannel> channel(ChannelListener& listener) override;
  void add_to(ssh_event event) override { pipe_->add_to(event); }
  void remove_from(ssh_event event) override { pipe_->remove_from(event); }
  bool closed() const override { return lost_.has_value() || pipe_->ended(); }
  std::string error() const override { return lost_ ? *lost_ : pipe_->error(); }

  // For FrameChannel.
  bool send(broker::Type type, std::uint32_t channel, std::string_view bytes = {});
  // Reads and dispatches frames until `done()`, the end, a stop or the
  // answer timeout; done().
  bool wait_until(const std::function<bool()>& done);
  // "NAME did not answer within Ns".
  std::string no_answer() const;
  const FrameChannelMode& mode() const { return mode_; }
  const FramePipe& pipe() const { return *pipe_; }
  void attach(std::uint32_t id, FrameChannel* channel) { channels_[id] = channel; }
  void detach(std::uint32_t id) { channels_.erase(id); }

  // For FramePipe: bytes read from the peer.
  void received(std::string_view bytes);

private:
  void dispatch(const broker::Frame& frame);

  std::unique_ptr<FramePipe> pipe_;
  FrameChannelMode mode_;
  Millis answer_timeout_;
  broker::FrameReader reader_;
  std::map<std::uint32_t, FrameChannel*> channels_;
  std::uint32_t next_id_ = 1;
  std::optional<broker::Frame> answer_;  // ready or refused, on channel 0
  std::optional<std::string> lost_;      // the broker's `lost`: why
};

} // namespace ddl
