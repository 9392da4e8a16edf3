// SPDX-License-Identifier: MIT
#pragma once

#include "src/util/topology.hpp"

namespace ddl {

// This machine's CPU topology, read by topology_script() like every other
// host's (bounded: a hung nvidia-smi cannot hold it); unknown, with why,
// when it cannot be read.
HostTopology local_topology();

} // namespace ddl
