// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

#include "backends/ssh/ssh_probe.hpp"
#include "src/util/topology.hpp"

namespace ddl {

// [launch] bind: per host, topology_script() run there under the shim (at
// most [ssh] fanout at once). `connections[i]`, when it holds a session
// (find_interfaces' one), is used; else one is opened and left there for the
// launch. A host that cannot be reached or read is unknown and says why.
std::vector<HostTopology> ssh_read_topology(const SshSection& ssh, const Inventory& hosts,
                                            std::vector<SshConnection>& connections);

} // namespace ddl
