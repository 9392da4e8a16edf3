// SPDX-License-Identifier: MIT
#pragma once

// Reaching the hosts through the job's backend without launching ranks:
// `ddl hosts --check` and `slots = "gpus"`.

#include <optional>
#include <string>
#include <vector>

#include "src/util/error.hpp"
#include "src/util/process.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

namespace ddl {

// What `hosts --check` reports per host.
struct HostCheck {
  bool reachable = false;
  std::string ddl_version;       // "" when ddl is not found there
  std::optional<int> gpu_count;  // nvidia-smi -L, else /proc/driver/nvidia/gpus
  std::string error;             // "" when all is well
};

// One entry per host, in order. ssh (and mpirun, which reaches hosts over
// ssh): connects to each host ([ssh] fanout at once); local: this machine.
std::vector<HostCheck> check_hosts(const JobSpec& job, const Inventory& hosts);

// slots = "gpus": each host's slots and GPU indices from its GPU count,
// probed through the backend. Hosts that cannot be probed or have no GPU are
// reported at once (ExitCode::launch). Without slots = "gpus": unchanged.
Result<Inventory> probe_gpu_slots(const JobSpec& job, Inventory hosts);

} // namespace ddl
