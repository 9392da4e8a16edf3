// SPDX-License-Identifier: MIT
#include <fmt/core.h>

#include "backends/local/local_backend.hpp"
#include "src/util/net.hpp"

namespace ddl {

namespace {

HostInterface interface_toward(const std::string& target) {
  net::Route route = net::route_to(target);
  if (route.end != net::RouteEnd::found) {
    return interface_unknown(fmt::format("no route to {}: {}", target, route.why));
  }
  std::string name = net::interface_holding(route.address);
  if (name.empty()) {
    return interface_unknown(fmt::format("no interface holds {}, where the route to {} leaves from",
                                         route.address, target));
  }
  return interface_found(std::move(name), route.address, target);
}

} // namespace

std::vector<HostInterface> LocalBackend::find_interfaces(const Inventory& hosts, const std::string& target) {
  return std::vector<HostInterface>(hosts.size(), interface_toward(target));
}

} // namespace ddl
