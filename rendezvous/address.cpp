// SPDX-License-Identifier: MIT
#include "rendezvous/address.hpp"

#include <fmt/format.h>

#include "src/util/net.hpp"

namespace ddl::rendezvous {
namespace {

// The local address the kernel would use to reach `host`.
Result<std::string> route_to(const std::string& host) {
  net::Route route = net::route_to(host);
  switch (route.end) {
  case net::RouteEnd::found:
    return route.address;
  case net::RouteEnd::unresolved:
    return fail(ExitCode::launch, fmt::format("rendezvous: cannot resolve host '{}' to find the "
                                              "address it reaches this machine at; set "
                                              "[rendezvous] address",
                                              host));
  case net::RouteEnd::unroutable:
    return fail(ExitCode::launch, fmt::format("rendezvous: no route to host '{}': {}; set "
                                              "[rendezvous] address",
                                              host, route.why));
  case net::RouteEnd::unnamed:
    break;
  }
  return fail(ExitCode::launch, "rendezvous: cannot name the local address");
}

const Host* first_remote_host(const Plan& plan) {
  for (const Host& host : plan.hosts) {
    if (!is_loopback(host.address)) return &host;
  }
  return nullptr;
}

} // namespace

bool is_loopback(const std::string& address) { return net::is_loopback(address); }

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
