// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "src/util/net.hpp"
#include "src/util/net_resolve.hpp"

namespace ddl::net {
namespace {

struct Resolved {
  sockaddr_storage addr{};
  socklen_t size = 0;
};

// The first address of `host`, or why there is none.
std::optional<Resolved> resolve_host(const std::string& host, std::string* why = nullptr) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* list = nullptr;
  int rc = lookup(host, "9", hints, &list);
  if (rc != 0 || !list) {
    if (why) *why = rc != 0 ? gai_strerror(rc) : "no address";
    return std::nullopt;
  }
  Resolved out;
  std::memcpy(&out.addr, list->ai_addr, list->ai_addrlen);
  out.size = list->ai_addrlen;
  freeaddrinfo(list);
  return out;
}

bool is_loopback_addr(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    auto ip = ntohl(reinterpret_cast<const sockaddr_in&>(addr).sin_addr.s_addr);
    return (ip >> 24) == 127;
  }
  if (addr.ss_family == AF_INET6) {
    const auto& ip = reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&ip);
  }
  return false;
}

} // namespace

Route route_to(const std::string& host) {
  Route route;
  auto target = resolve_host(host, &route.why);
  if (!target) {
    route.end = RouteEnd::unresolved;
    return route;
  }
  // connect() on a UDP socket only picks the route and the source address.
  Fd fd(::socket(target->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&target->addr), target->size) != 0) {
    route.end = RouteEnd::unroutable;
    route.why = std::strerror(errno);
    return route;
  }
  route.address = local_address(fd.get());
  if (route.address.empty()) route.end = RouteEnd::unnamed;
  return route;
}

std::string interface_holding(const std::string& address) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string found;
  for (const ifaddrs* entry = list; entry != nullptr && found.empty(); entry = entry->ifa_next) {
    const sockaddr* addr = entry->ifa_addr;
    if (addr == nullptr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) continue;
    const auto size = static_cast<socklen_t>(addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    std::array<char, NI_MAXHOST> text{};
    if (::getnameinfo(addr, size, text.data(), static_cast<socklen_t>(text.size()), nullptr, 0, NI_NUMERICHOST) == 0 &&
        address == text.data()) {
      found = entry->ifa_name;
    }
  }
  ::freeifaddrs(list);
  return found;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  auto resolved = resolve_host(host);
  return resolved && is_loopback_addr(resolved->addr);
}

} // namespace ddl::net
