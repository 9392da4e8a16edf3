// SPDX-License-Identifier: MIT
// Whether a host is this machine: what decides the local backend under auto.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "src/util/net.hpp"

namespace ddl::net {
namespace {

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

// The numeric form of an IPv4 or IPv6 socket address ("" for other families).
std::string numeric(const sockaddr* addr) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (addr->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(addr);
    return inet_ntop(AF_INET, &v4->sin_addr, text.data(), text.size()) ? text.data() : "";
  }
  if (addr->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(addr);
    return inet_ntop(AF_INET6, &v6->sin6_addr, text.data(), text.size()) ? text.data() : "";
  }
  return {};
}

bool is_loopback_address(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    auto ip = ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr);
    return (ip >> 24) == 127;
  }
  if (addr->sa_family == AF_INET6) {
    const auto& ip = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&ip);
  }
  return false;
}

// Every address of this machine's interfaces, numeric.
std::set<std::string> interface_addresses() {
  std::set<std::string> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    return out;
  }
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr != nullptr) {
      if (auto text = numeric(entry->ifa_addr); !text.empty()) {
        out.insert(text);
      }
    }
  }
  ::freeifaddrs(list);
  return out;
}

// This machine's host name, and its first label ("node1" of "node1.lab").
bool is_own_name(std::string_view host) {
  const std::string own = to_lower(own_hostname());
  if (own.empty()) {
    return false;
  }
  const std::string wanted = to_lower(host);
  return wanted == own || wanted == own.substr(0, own.find('.'));
}

std::string unbracketed(const std::string& host) {
  return host.size() >= 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
}

// Every address `host` resolves to (empty when it does not), with whether
// each is loopback.
std::vector<std::pair<std::string, bool>> resolved(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  std::vector<std::pair<std::string, bool>> out;
  if (::getaddrinfo(unbracketed(host).c_str(), nullptr, &hints, &list) != 0 || list == nullptr) {
    return out;
  }
  for (const addrinfo* entry = list; entry != nullptr; entry = entry->ai_next) {
    out.emplace_back(numeric(entry->ai_addr), is_loopback_address(entry->ai_addr));
  }
  ::freeaddrinfo(list);
  return out;
}

} // namespace

std::string own_hostname() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) {
    return "";
  }
  return name.data();
}

bool is_this_machine(const std::string& host) {
  const std::string bare = unbracketed(host);
  if (to_lower(bare) == "localhost" || is_own_name(bare)) {
    return true;
  }
  const auto addresses = resolved(bare);
  if (addresses.empty()) {
    return false;  // unresolved here: certainly not a name of this machine
  }
  const auto own = interface_addresses();
  return std::ranges::all_of(addresses,
                             [&](const auto& address) { return address.second || own.contains(address.first); });
}

std::set<std::string> addresses_of(const std::string& host) {
  std::set<std::string> out;
  for (const auto& address : resolved(host)) {
    out.insert(address.first);
  }
  return out;
}

std::set<std::string> local_addresses() { return interface_addresses(); }

std::string peer_address(const void* addr) {
  const auto* peer = static_cast<const sockaddr*>(addr);
  if (peer->sa_family == AF_INET6) {
    const auto& v6 = static_cast<const sockaddr_in6*>(addr)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      sockaddr_in v4{};
      v4.sin_family = AF_INET;
      std::memcpy(&v4.sin_addr, &v6.s6_addr[12], 4);
      return numeric(reinterpret_cast<const sockaddr*>(&v4));
    }
  }
  return numeric(peer);
}

} // namespace ddl::net
