// SPDX-License-Identifier: MIT
#include "src/inventory/local_topology.hpp"

#include <fmt/core.h>

#include "src/util/run_captured.hpp"
#include "src/util/text.hpp"

namespace ddl {

HostTopology local_topology() {
  constexpr Millis k_probe_timeout{20'000};
  auto run = run_captured({"/bin/sh", "-c", std::string(topology_script())}, k_probe_timeout);
  if (!run) {
    return topology_unknown(run.error().message);
  }
  if (run->timed_out || run->stopped) {
    return topology_unknown(run->timed_out ? "the topology probe did not answer" : "stopped");
  }
  return parse_topology(run->out);
}

} // namespace ddl
