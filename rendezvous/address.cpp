// SPDX-License-Identifier: MIT
#include "rendezvous/address.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <optional>
#include <cstring>

#include <fmt/format.h>

#include "src/util/net.hpp"

namespace ddl::rendezvous {
namespace {

struct Resolved {
  sockaddr_storage addr{};
  socklen_t size = 0;
};

std::optional<Resolved> resolve_host(const std::string& host) {
  std::string bare = host;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* list = nullptr;
  if (getaddrinfo(bare.c_str(), "9", &hints, &list) != 0 || !list) return std::nullopt;
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

std::string numeric_host(const sockaddr_storage& addr, socklen_t size) {
  std::array<char, NI_MAXHOST> text{};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), size, text.data(),
                  static_cast<socklen_t>(text.size()), nullptr, 0, NI_NUMERICHOST) != 0) {
    return {};
  }
  return text.data();
}

// The local address the kernel would use to reach `host`.
Result<std::string> route_to(const std::string& host) {
  auto target = resolve_host(host);
  if (!target) {
    return fail(ExitCode::launch, fmt::format("rendezvous: cannot resolve host '{}' to find the "
                                              "address it reaches this machine at; set "
                                              "[rendezvous] address",
                                              host));
  }
  Fd fd(::socket(target->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&target->addr), target->size) != 0) {
    return fail(ExitCode::launch, fmt::format("rendezvous: no route to host '{}': {}; set "
                                              "[rendezvous] address",
                                              host, std::strerror(errno)));
  }
  sockaddr_storage local{};
  socklen_t size = sizeof local;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &size);
  std::string address = numeric_host(local, size);
  if (address.empty()) return fail(ExitCode::launch, "rendezvous: cannot name the local address");
  return address;
}

const Host* first_remote_host(const Plan& plan) {
  for (const Host& host : plan.hosts) {
    if (!is_loopback(host.address)) return &host;
  }
  return nullptr;
}

} // namespace

bool is_loopback(const std::string& address) {
  if (address == "localhost") return true;
  auto resolved = resolve_host(address);
  return resolved && is_loopback_addr(resolved->addr);
}

Result<std::string> bind_address(const JobSpec& job, const Plan& plan, bool ranks_are_local) {
  const std::string& wanted = job.rendezvous.address;
  const Host* remote = ranks_are_local ? nullptr : first_remote_host(plan);
  if (wanted != "auto") {
    if (remote && is_loopback(wanted)) {
      return fail(ExitCode::usage,
                  fmt::format("[rendezvous] address {} is a loopback address, but host {} ({}) "
                              "is remote: its workers could not reach the rendezvous",
                              wanted, remote->name, remote->address));
    }
    return wanted;
  }
  if (!remote) return std::string("127.0.0.1");
  return route_to(remote->address);
}

} // namespace ddl::rendezvous
