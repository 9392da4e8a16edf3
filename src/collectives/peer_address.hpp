// SPDX-License-Identifier: MIT
#pragma once

// Where a rank of ddl's own collectives listens, as it tells the others
// through the rendezvous: "HOST:PORT:COOKIE" (the cookie in hex proves that
// a connection comes from the job). The ring and the preflight check.

#include <cstdint>
#include <string>
#include <string_view>

#include "src/util/error.hpp"

namespace ddl::coll {

struct PeerAddress {
  std::string host;
  int port = 0;
  std::uint64_t cookie = 0;
};

// A fresh random cookie.
std::uint64_t random_cookie();
// The listening socket `listen_fd`'s address with `cookie`.
std::string listening_address(int listen_fd, std::uint64_t cookie);
// `what` names the exchange in the error ("ring", "preflight").
Result<PeerAddress> parse_peer_address(const std::string& text, std::string_view what);

} // namespace ddl::coll
