// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_topology.hpp"

#include <fmt/core.h>

#include "src/util/parallel.hpp"
#include "backends/ssh/shim_channel.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

HostTopology read_one(const SshSection& ssh, const Host& host, SshConnection& kept) {
  if (!kept.session) {
    auto session = ssh_open(ssh, host);
    if (!session) {
      kept.error = session.error().message;
      return topology_unknown(session.error().message);
    }
    kept.session = std::move(*session);
  }
  ShimJob probe;
  probe.argv = {"sh", "-c", std::string(topology_script())};
  probe.grace = Millis{1000};
  auto ran = run_shim_once(kept.session.get(), probe, remote_answer_timeout(ssh));
  if (!ran) {
    return topology_unknown(ran.error().message);
  }
  if (ran->exit.code != 0) {
    return topology_unknown(fmt::format("the topology probe failed (exit {}): {}", ran->exit.code, trim(ran->err)));
  }
  return parse_topology(ran->out);
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
