// SPDX-License-Identifier: MIT
#include "src/launch/plan_hosts.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "src/util/net.hpp"

namespace ddl {

Result<Inventory> found_hosts(const JobSpec& job, Backend& backend) {
  if (auto own = backend.own_hosts()) {
    return std::move(*own);
  }
  return discover_hosts(job);
}

Inventory routable_addresses(Inventory hosts, bool ranks_are_local) {
  if (ranks_are_local) {
    return hosts;
  }
  auto remote = std::ranges::find_if(hosts, [](const Host& host) { return !net::is_loopback(host.address); });
  if (remote == hosts.end()) {
    return hosts;
  }
  net::Route route = net::route_to(remote->address);
  if (route.end != net::RouteEnd::found) {
    return hosts;
  }
  for (Host& host : hosts) {
    if (net::is_loopback(host.address)) {
      spdlog::info("{}: address {} is this machine's loopback; remote ranks reach it at {}", host.name,
                   host.address, route.address);
      host.address = route.address;
    }
  }
  return hosts;
}

Result<Inventory> hosts_for_plan(const JobSpec& job, Backend& backend, Inventory found, HostSteps steps) {
  const bool gpu_slots = job.hosts.slots_from_gpus;
  if (!gpu_slots) {
    auto kept = filter_hosts(std::move(found), job.hosts);
    if (!kept) {
      return kept;
    }
    found = std::move(*kept);
  }
  Inventory hosts = routable_addresses(backend.resolve_addresses(std::move(found)), backend.ranks_are_local());
  if (!gpu_slots || steps == HostSteps::before_probe) {
    return hosts;
  }
  auto probed = backend.probe_gpus(std::move(hosts));
  if (!probed) {
    return probed;
  }
  return filter_hosts(std::move(*probed), job.hosts);
}

Result<Inventory> hosts_for_plan(const JobSpec& job, Backend& backend) {
  auto found = found_hosts(job, backend);
  if (!found) {
    return found;
  }
  return hosts_for_plan(job, backend, std::move(*found));
}

} // namespace ddl
