// SPDX-License-Identifier: MIT
#pragma once

// The rendezvous wire protocol (version 1). Also documented in man/ddl.1, so
// that user programs can speak it with DDL_RENDEZVOUS and DDL_TOKEN.
//
// Every message is a frame: a u32 length (big-endian) of the payload that
// follows, 1 .. 16 MiB, then the payload: a u8 type and its fields. Fields are
// u32 (4 bytes, big-endian) and bytes (a u32 length, then the raw bytes).
//
//   server -> client, at once on connect:
//     HELLO     0x01  u32 version (1), 32 raw bytes nonce
//   client -> server, within the handshake deadline (3 s), at most 4 KiB:
//     JOIN      0x02  u32 rank, u32 world_size, bytes job, 32 raw bytes mac
//                     mac = HMAC-SHA256(key = DDL_TOKEN's text as is,
//                           nonce || u32 rank || u32 world_size || job)
//   server -> client: OK, or ERROR and the connection is closed.
//   The first request may follow JOIN at once (one round trip saved): the
//   join's OK then goes out with that request's reply, in one send; a refused
//   join's request is never handled.
//   or, instead of JOIN (the hang watchdog's progress, issue 17):
//     HEARTBEAT 0x03  the fields of JOIN, the same mac; the rank made progress
//                     -> OK, then the server closes (the rank does not join)
//   Then requests, one at a time, each answered by one reply (a client that
//   lets replies pile up unread is disconnected):
//     BARRIER   0x10                          -> OK once every rank is in it
//     SET       0x11  bytes key, bytes value  -> OK
//     GET       0x12  bytes key, u32 timeout_ms -> VALUE once the key is set
//     ALLGATHER 0x13  bytes value             -> VALUES: every rank's value
//     LEAVE     0x14                          -> OK, then the server closes
//   replies:
//     OK        0x80
//     VALUE     0x81  bytes value
//     VALUES    0x82  u32 count, count x bytes (indexed by rank)
//     ERROR     0x7f  u32 kind, bytes message (UTF-8, for a human)
//                     kind: 1 join refused, 2 timed out, 3 a rank is gone,
//                     4 bad request (the connection is then closed)
//
// A rank whose connection ends without LEAVE is dead: every pending and later
// BARRIER, ALLGATHER and blocking GET fails with an ERROR naming it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/util/error.hpp"
#include "src/util/net.hpp"

namespace ddl::rendezvous {

using net::Clock;
using net::Fd;
// How the rendezvous words listen and dial errors.
inline constexpr net::Wording k_net_wording{"rendezvous: ", "rendezvous address "};

inline constexpr std::uint32_t k_protocol_version = 1;
inline constexpr std::size_t k_nonce_bytes = 32;
inline constexpr std::size_t k_mac_bytes = 32;
inline constexpr std::size_t k_max_frame = 16u << 20;
inline constexpr std::size_t k_max_join_frame = 4096;

enum class MsgType : std::uint8_t {
  hello = 0x01,
  join = 0x02,
  heartbeat = 0x03,
  barrier = 0x10,
  set = 0x11,
  get = 0x12,
  allgather = 0x13,
  leave = 0x14,
  error = 0x7f,
  ok = 0x80,
  value = 0x81,
  values = 0x82,
};

enum class ErrorKind : std::uint32_t {
  refused = 1,
  timed_out = 2,
  rank_gone = 3,
  bad_request = 4,
};

// Builds one frame, length prefix included.
class FrameWriter {
public:
  explicit FrameWriter(MsgType type);
  FrameWriter& u32(std::uint32_t value);
  FrameWriter& bytes(std::string_view value);
  FrameWriter& raw(std::string_view value);
  std::string finish();  // the writer is empty afterwards

private:
  std::string out_;
};

// Reads the fields of one frame's payload; every read is bounds-checked.
class FrameReader {
public:
  explicit FrameReader(std::string_view payload);
  std::optional<MsgType> type() const { return type_; }
  std::optional<std::uint32_t> u32();
  std::optional<std::string_view> bytes();
  std::optional<std::string_view> raw(std::size_t size);
  bool at_end() const { return rest_.empty(); }

private:
  std::optional<MsgType> type_;
  std::string_view rest_;
};

std::uint32_t read_be32(const char* bytes);
void append_be32(std::string& out, std::uint32_t value);

// The bytes the join MAC covers.
std::string join_message(std::string_view nonce, std::uint32_t rank,
                         std::uint32_t world_size, std::string_view job);
std::string join_mac(std::string_view token, std::string_view nonce, std::uint32_t rank,
                     std::uint32_t world_size, std::string_view job);

// A fresh job token: 32 random bytes as 64 lowercase hex digits.
Result<std::string> generate_token();

} // namespace ddl::rendezvous
