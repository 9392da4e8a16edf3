// SPDX-License-Identifier: MIT
#pragma once

// Helpers for the rendezvous tests: a server with short deadlines, and a raw
// socket peer that can misbehave in ways the real client never would.

#include <sys/socket.h>

#include <string>

#include "rendezvous/client.hpp"
#include "rendezvous/protocol.hpp"
#include "rendezvous/server.hpp"
#include "src/util/net.hpp"

namespace ddl::rendezvous::testing {

inline const std::string k_token(64, 'a');

inline ServerOptions test_options(int world_size) {
  ServerOptions options;
  options.token = k_token;
  options.world_size = world_size;
  options.job = "unit";
  options.handshake_timeout = Millis(300);
  return options;
}

inline JoinInfo join_info(const std::string& endpoint, int rank, int world_size) {
  return JoinInfo{endpoint, k_token, rank, world_size, "unit"};
}

inline auto soon(int ms = 3000) { return Clock::now() + Millis(ms); }

// A raw connection to the server.
struct RawPeer {
  Fd fd;
  std::string nonce;

  explicit RawPeer(const std::string& endpoint) {
    auto where = net::parse_endpoint(endpoint);
    auto dialed = net::dial_tcp(where->host, where->port, soon());
    if (dialed) fd = std::move(*dialed);
  }

  // The next frame's payload; "" when the server closed the connection.
  std::string frame(int ms = 3000) {
    char prefix[4];
    if (!net::recv_exact(fd.get(), prefix, 4, soon(ms))) return {};
    std::string payload(read_be32(prefix), '\0');
    if (!net::recv_exact(fd.get(), payload.data(), payload.size(), soon(ms))) return {};
    return payload;
  }

  bool read_hello() {
    std::string hello = frame();
    if (hello.size() != 1 + 4 + k_nonce_bytes) return false;
    nonce = hello.substr(5);
    return true;
  }

  void send(std::string_view bytes) { (void)net::send_all(fd.get(), bytes, soon()); }

  // The JOIN frame for the nonce of the HELLO read last.
  std::string join_frame(int rank, int world_size, const std::string& token = k_token) const {
    auto r = static_cast<std::uint32_t>(rank);
    auto w = static_cast<std::uint32_t>(world_size);
    return FrameWriter(MsgType::join).u32(r).u32(w).bytes("unit")
        .raw(join_mac(token, nonce, r, w, "unit")).finish();
  }

  // Joins by hand; returns the reply's payload.
  std::string join(int rank, int world_size, const std::string& token = k_token) {
    if (!read_hello()) return {};
    send(join_frame(rank, world_size, token));
    return frame();
  }

  // True when the server closes the connection within `ms`.
  bool closed_within(int ms) {
    char byte;
    auto deadline = soon(ms);
    for (;;) {
      auto got = net::recv_exact(fd.get(), &byte, 1, deadline);
      if (!got) return got.end != net::IoEnd::timed_out;
    }
  }
};

inline std::string error_text(const std::string& payload) {
  FrameReader reader(payload);
  if (reader.type() != MsgType::error) return "(not an error)";
  (void)reader.u32();
  return std::string(reader.bytes().value_or("(malformed)"));
}

} // namespace ddl::rendezvous::testing
