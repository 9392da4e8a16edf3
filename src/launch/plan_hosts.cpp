// SPDX-License-Identifier: MIT
#include "src/launch/plan_hosts.hpp"

#include <algorithm>
#include <optional>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/plan/plan.hpp"
#include "src/util/net.hpp"
#include "src/util/net_resolve.hpp"

namespace ddl {

Result<Inventory> found_hosts(const JobSpec& job, Backend& backend) {
  if (auto own = backend.own_hosts()) {
    return std::move(*own);
  }
  return discover_hosts(job);
}

namespace {

// Per host, whether its address is this machine's loopback: every address
// looked up at once under one deadline. In a launch a host whose address
// does not resolve is an error naming each one; in a render (no DNS) it is
// remote and keeps its name.
Result<std::vector<bool>> loopback_hosts(const Inventory& hosts) {
  std::vector<std::string> addresses;
  for (const Host& host : hosts) {
    addresses.push_back(host.address);
  }
  auto answers = net::resolve_all(addresses, net::k_resolve_deadline);
  std::vector<bool> loopback(hosts.size(), false);
  std::string problems;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    loopback[i] = answers[i].resolved && answers[i].loopback;
    if (!answers[i].resolved && net::name_lookup() == net::NameLookup::resolver) {
      problems += fmt::format("\n  {}: cannot resolve {}: {}", hosts[i].name, hosts[i].address, answers[i].why);
    }
  }
  if (!problems.empty()) {
    return fail(ExitCode::launch, "cannot resolve the address of every host:" + problems);
  }
  return loopback;
}

// Whether `host` is this machine as the backend starts its ranks: every
// host of a backend whose ranks run here, else one whose address is this
// machine's, known without DNS ("localhost", 127.0.0.1, an address of its own).
bool runs_here(const Backend& backend, const Host& host) {
  return backend.ranks_are_local() || (net::known_without_dns(host.address) && net::is_this_machine(host.address));
}

// Step 6, [launch] bind_gpus: hosts of this machine whose GPUs their source
// did not give (a list, a hostfile) are counted here; where there are none,
// none is bound (Host::gpus_probed) rather than GPU `local rank`, which a
// container runtime would then be asked for. Remote hosts are counted by
// the launch, over its own connection to each (session::unbind_absent_gpus).
void count_gpus_here(const JobSpec& job, const Backend& backend, Inventory& hosts) {
  if (!job.launch.bind_gpus) {
    return;
  }
  std::optional<int> here;
  for (Host& host : hosts) {
    if (gpus_known(host) || !runs_here(backend, host)) {
      continue;
    }
    if (!here) {
      here = local_gpu_count();
    }
    host.gpus_probed = *here == 0;
    if (host.gpus_probed) {
      spdlog::info("{}: no GPU on this machine; its ranks get none (no CUDA_VISIBLE_DEVICES)", host.name);
    }
  }
}

} // namespace

Result<Inventory> routable_addresses(Inventory hosts, bool ranks_are_local) {
  if (ranks_are_local) {
    return hosts;
  }
  auto loopback = loopback_hosts(hosts);
  if (!loopback) {
    return fail(loopback.error());
  }
  auto remote = std::ranges::find(*loopback, false);
  if (remote == loopback->end()) {
    return hosts;
  }
  net::Route route = net::route_to(hosts[static_cast<std::size_t>(remote - loopback->begin())].address);
  if (route.end != net::RouteEnd::found) {
    return hosts;
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if ((*loopback)[i]) {
      spdlog::info("{}: address {} is this machine's loopback; remote ranks reach it at {}", hosts[i].name,
                   hosts[i].address, route.address);
      hosts[i].address = route.address;
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
  auto routable = routable_addresses(backend.resolve_addresses(std::move(found)), backend.ranks_are_local());
  if (!routable) {
    return routable;
  }
  Inventory hosts = std::move(*routable);
  if (steps == HostSteps::before_probe) {
    return hosts;
  }
  if (!gpu_slots) {
    count_gpus_here(job, backend, hosts);
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
