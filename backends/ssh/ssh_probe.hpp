// SPDX-License-Identifier: MIT
#pragma once

// Reaching hosts over SSH without launching anything: `ddl hosts --check`
// and the GPU probe of `slots = "gpus"`.

#include <optional>
#include <string>
#include <vector>

#include "backends/probe.hpp"
#include "src/util/error.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

namespace ddl {

// Connects to every host (at most [ssh] fanout at once, each bounded by
// connect_timeout), verifies its key, authenticates, and runs a probe under
// the shim: is [ssh] remote_ddl (default: this binary's path) there, its
// `--version`, the GPU count. One entry per host, in order.
std::vector<HostCheck> ssh_check_hosts(const JobSpec& job, const Inventory& hosts);

// slots = "gpus": each host's slots and GPU list from its GPU count. Every
// host that cannot be probed or has no GPU is reported at once
// (ExitCode::launch).
Result<Inventory> ssh_probe_gpu_slots(const JobSpec& job, Inventory hosts);


} // namespace ddl
