// SPDX-License-Identifier: MIT
#pragma once

// The CPU layout of one host, as [launch] bind needs it (issue 31): the CPUs
// a process there may use, its NUMA nodes, and each GPU's node. Every host,
// this one included, is read by the same sh script (sysfs, and nvidia-smi
// for the GPUs' PCI addresses), so that local and remote hosts are read alike.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"

namespace ddl {

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;  // those a process may use, ascending
};

struct HostTopology {
  std::vector<int> cpus;        // online and allowed, ascending; empty: unknown
  std::vector<NumaNode> nodes;  // nodes with CPUs, by id; empty: the host shows none
  std::map<int, int> gpu_nodes; // nvidia-smi's GPU index -> its NUMA node (known ones only)
  std::string why;              // why the topology is unknown
  bool known() const { return !cpus.empty(); }
};

// The probe: prints "online LIST", "allowed LIST", "node N LIST" per NUMA
// node, "gpu INDEX NODE" per GPU that nvidia-smi lists (NODE -1: none).
// It holds no single quote.
std::string_view topology_script();

// What topology_script() printed, read back; unknown (with why) when it
// names no usable CPU.
HostTopology parse_topology(std::string_view probe_output);

HostTopology topology_unknown(std::string why);

// "0-3,8,10-11" as the kernel writes CPU lists; nullopt when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);
// The reverse, with ranges: {0,1,2,3,8} -> "0-3,8".
std::string cpu_list_text(const std::vector<int>& cpus);

// Pins the calling process (every thread it starts later) to `cpus`.
Result<void> pin_to_cpus(const std::vector<int>& cpus);

} // namespace ddl
