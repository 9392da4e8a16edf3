// SPDX-License-Identifier: MIT
#include "src/collectives/peer_address.hpp"

#include <cstdlib>
#include <random>

#include <fmt/core.h>

#include "src/util/net.hpp"

namespace ddl::coll {

std::uint64_t random_cookie() {
  return (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
}

std::string listening_address(int listen_fd, std::uint64_t cookie) {
  return fmt::format("{}:{:x}", net::format_endpoint(net::local_address(listen_fd), net::local_port(listen_fd)),
                     cookie);
}

Result<PeerAddress> parse_peer_address(const std::string& text, std::string_view what) {
  const auto last = text.rfind(':');
  auto endpoint = net::parse_endpoint(std::string_view(text).substr(0, last));  // npos: all of it, then no cookie
  if (last == std::string::npos || !endpoint) {
    return fail(ExitCode::launch, fmt::format("malformed {} address '{}'", what, text));
  }
  return PeerAddress{endpoint->host, endpoint->port, std::strtoull(text.c_str() + last + 1, nullptr, 16)};
}

} // namespace ddl::coll
