// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_topology.hpp"

#include <fmt/core.h>

#include "src/util/parallel.hpp"
#include "backends/ssh/shim_probe.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

HostTopology read_one(const SshSection& ssh, const Host& host, SshConnection& kept) {
  auto answer = ask_shim(ssh, host, kept, topology_script());
  if (!answer) {
    return topology_unknown(answer.error().message);
  }
  if (answer->status != 0) {
    return topology_unknown(fmt::format("the topology probe failed (exit {}): {}", answer->status, trim(answer->out)));
  }
  return parse_topology(answer->out);
}

} // namespace

std::vector<HostTopology> ssh_read_topology(const SshSection& ssh, const Inventory& hosts,
                                            std::vector<SshConnection>& connections) {
  std::vector<HostTopology> found(hosts.size());
  connections.resize(hosts.size());
  for_each_parallel(hosts.size(), ssh.fanout,
                    [&](std::size_t i) { found[i] = read_one(ssh, hosts[i], connections[i]); });
  return found;
}

} // namespace ddl
