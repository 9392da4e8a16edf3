// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_access.hpp"

#include <algorithm>

#include "backends/ssh/ssh_probe.hpp"
#include "backends/ssh/ssh_topology.hpp"

namespace ddl {

SshAccess::SshAccess(const SshSection& ssh, Keep keep) : ssh_(ssh), keep_(keep) {}

Inventory SshAccess::resolve_addresses(Inventory hosts) { return ssh_resolve_addresses(ssh_, std::move(hosts)); }

Result<Inventory> SshAccess::probe_gpus(Inventory hosts) {
  if (keep_ == Keep::nothing) {
    return ssh_probe_gpu_slots(ssh_, std::move(hosts));
  }
  auto connections = take_kept(hosts);
  auto probed = ssh_probe_gpu_slots(ssh_, hosts, &connections);
  keep(hosts, connections);
  return probed;
}

// Keep::connections: over each host's kept connection and shim, kept for
// the next question and the launch.
std::optional<std::vector<HostCheck>> SshAccess::check(const Inventory& hosts) {
  if (keep_ == Keep::nothing) {
    return ssh_check_hosts(ssh_, ddl_path(), hosts);
  }
  auto connections = take_kept(hosts);
  auto checks = ssh_check_hosts(ssh_, ddl_path(), hosts, &connections);
  keep(hosts, connections);
  return checks;
}

std::vector<SshConnection> SshAccess::take_kept(const Inventory& hosts) {
  std::vector<SshConnection> connections(hosts.size());
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (auto kept = kept_.find(hosts[i].name); kept != kept_.end()) {
      connections[i] = std::move(kept->second);
      kept_.erase(kept);
    }
  }
  return connections;
}

void SshAccess::keep(const Inventory& hosts, std::vector<SshConnection>& connections) {
  if (keep_ == Keep::nothing) {
    return;
  }
  for (std::size_t i = 0; i < hosts.size() && i < connections.size(); ++i) {
    kept_[hosts[i].name] = std::move(connections[i]);
  }
}

// check()'s answers: the connections and their shims stay for
// find_interfaces and the launch.
std::vector<std::string> SshAccess::preflight(const Inventory& hosts) {
  const std::vector<HostCheck> checks = *check(hosts);
  std::vector<std::string> problems(hosts.size());
  for (std::size_t i = 0; i < hosts.size() && i < checks.size(); ++i) {
    if (!checks[i].reachable) {
      problems[i] = "preflight: " + (checks[i].error.empty() ? std::string("not reachable") : checks[i].error);
    }
  }
  return problems;
}

std::optional<Result<int>> SshAccess::master_port(const Host& host, int first, int count) {
  if (ports_in_use_ && ports_host_ == host.name) {
    return master_port_among(*ports_in_use_, host, first, count);
  }
  if (keep_ == Keep::nothing) {
    return ssh_master_port(ssh_, host, first, count);
  }
  // Over the host's kept connection and shim, which then starts its first rank.
  return ssh_master_port(ssh_, host, first, count, &kept_[host.name]);
}

std::vector<HostInterface> SshAccess::find_interfaces(const Inventory& hosts, const std::string& target) {
  auto connections = take_kept(hosts);
  auto rank0 = std::ranges::find_if(hosts, [&](const Host& host) { return host.address == target; });
  std::optional<std::size_t> ports_on;
  ports_in_use_.reset();
  ports_host_.clear();
  if (rank0 != hosts.end()) {
    ports_on = static_cast<std::size_t>(rank0 - hosts.begin());
    ports_host_ = rank0->name;
  }
  auto found = ssh_find_interfaces(ssh_, hosts, target, connections, ports_on, &ports_in_use_);
  keep(hosts, connections);
  return found;
}

std::optional<std::vector<HostTopology>> SshAccess::read_topology(const Inventory& hosts) {
  auto connections = take_kept(hosts);
  auto found = ssh_read_topology(ssh_, hosts, connections);
  keep(hosts, connections);
  return found;
}

std::vector<std::optional<int>> SshAccess::gpu_counts(const Inventory& hosts) {
  if (keep_ == Keep::nothing) {
    return {};
  }
  auto connections = take_kept(hosts);
  auto counts = ssh_count_gpus(ssh_, hosts, connections);
  keep(hosts, connections);
  return counts;
}

std::string SshAccess::ddl_path() const { return remote_ddl_path(ssh_); }

} // namespace ddl
