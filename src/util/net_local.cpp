// SPDX-License-Identifier: MIT
// Whether a host is this machine: what decides the local backend under auto.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <set>
#include <string_view>

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

} // namespace

std::string own_hostname() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) {
    return "";
  }
  return name.data();
}

bool is_this_machine(const std::string& host) {
  std::string bare = host;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  if (to_lower(bare) == "localhost" || is_own_name(bare)) {
    return true;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (::getaddrinfo(bare.c_str(), nullptr, &hints, &list) != 0 || list == nullptr) {
    return false;  // unresolved here: certainly not a name of this machine
  }
  const auto own = interface_addresses();
  bool all_own = true;
  for (const addrinfo* entry = list; entry != nullptr; entry = entry->ai_next) {
    if (!is_loopback_address(entry->ai_addr) && !own.contains(numeric(entry->ai_addr))) {
      all_own = false;
    }
  }
  ::freeaddrinfo(list);
  return all_own;
}

} // namespace ddl::net
