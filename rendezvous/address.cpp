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
    // A host that has no address at all: most often a typo in its name.
    return fail(ExitCode::launch, fmt::format("host '{}' cannot be resolved (no such name in DNS or "
                                              "/etc/hosts); check its spelling",
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

Result<RendezvousAddress> rendezvous_address(const JobSpec& job, const Plan& plan,
                                             bool ranks_are_local) {
  const std::string& wanted = job.rendezvous.address;
  const Host* remote = ranks_are_local ? nullptr : first_remote_host(plan);
  const bool wildcard = wanted == "0.0.0.0" || wanted == "::";
  if (wanted != "auto" && !wildcard) {
    if (remote && is_loopback(wanted)) {
      return fail(ExitCode::usage,
                  fmt::format("[rendezvous] address {} is a loopback address, but host {} ({}) "
                              "is remote: its workers could not reach the rendezvous",
                              wanted, remote->name, remote->address));
    }
    return RendezvousAddress{wanted, wanted};
  }
  std::string advertise = "127.0.0.1";
  if (remote) {
    auto routed = route_to(remote->address);
    if (!routed) return fail(routed.error());
    advertise = *routed;
  }
  return RendezvousAddress{wildcard ? wanted : advertise, advertise};
}

} // namespace ddl::rendezvous
