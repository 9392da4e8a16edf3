// SPDX-License-Identifier: MIT
#pragma once

// The frame protocol (version k_protocol) of ddl's framed sessions
// (frame_session.hpp): between a sweep's session broker (ssh_broker.hpp) and
// its trials (broker_client.hpp), and between ddl and its relay on a host
// (relay_server.hpp, relay_session.hpp). One version for both: the peers are
// the same ddl (a sweep's trials are its own children; the relay is started
// only where the host's ddl prints this ddl's --version). doc/protocols.md
// has the protocol. The broker holds one
// SSH connection per host for the whole sweep; a trial opens one unix stream
// connection to it per host it would have connected to, and each of its
// channels (the shim's probe, each rank) is a channel of the broker's
// connection, relayed over the unix one. Every message is a frame:
//
//   u32 length (big-endian, of what follows) | u8 type | u32 channel (big-endian) | bytes
//
// trial -> broker
//   hello   channel 0; JSON {"version": 1, "name", "address", "user", "port"}:
//           the host (the broker connects with the sweep's [ssh] settings)
//   open    a new channel id (chosen by the trial); bytes: the command to exec
//   data    bytes for the channel's stdin
//   eof     the channel's stdin ends
//   close   the trial is done with the channel (it is closed if still open)
//   hold / release   stop reading the channel's output (its sender waits,
//           as on a full ssh window), then read it again: what the broker
//           sends its relay while a trial reads slower than its rank writes
// broker -> trial
//   ready / refused   channel 0; the answer to hello (ready: JSON
//                     {"version": 1}, as the relay's greeting; refused: why,
//                     one line)
//   opened / open_failed   the answer to open (open_failed: why)
//   out / err         the channel's stdout / stderr
//   exit_status       bytes: the status in decimal
//   exit_signal       bytes: the signal's name without SIG ("TERM")
//   closed            the remote side closed the channel
//   lost              channel 0; the host's connection died (bytes: why); every
//                     channel of this unix connection is gone, and the broker
//                     closes it
// A trial that disconnects (or dies) has its open channels sent EOF and
// closed, as when its own connection drops: the shims end their ranks.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddl {
class ChannelListener;
}

namespace ddl::broker {

// The frame protocol's version: in the broker's hello and in the `ready`
// greeting of the broker and the relay.
inline constexpr int k_protocol = 1;
// The bytes of `ready`: {"version":k_protocol}.
std::string ready_bytes();

enum class Type : std::uint8_t {
  hello = 1,
  open = 2,
  data = 3,
  eof = 4,
  close = 5,
  hold = 6,
  release = 7,
  ready = 16,
  refused = 17,
  opened = 18,
  open_failed = 19,
  out = 20,
  err = 21,
  exit_status = 22,
  exit_signal = 23,
  closed = 24,
  lost = 25,
};

struct Frame {
  Type type = Type::hello;
  std::uint32_t channel = 0;
  std::string bytes;
};

std::string encode(Type type, std::uint32_t channel, std::string_view bytes = {});

// The frames that tell a channel what its command did (out, err,
// exit_status, exit_signal, closed), handed to its listener; false for the
// other types, which the caller handles.
bool tell(ChannelListener& listener, const Frame& frame);

// Whole frames taken off the bytes read so far.
class FrameReader {
public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame; nullopt until one is there, or when the stream is
  // bad (a frame over the size limit: see bad()).
  std::optional<Frame> next();
  bool bad() const { return bad_; }

private:
  std::string buffer_;
  std::size_t start_ = 0;
  bool bad_ = false;
};

} // namespace ddl::broker
