// SPDX-License-Identifier: MIT
// Hostfiles for MPI launchers and DeepSpeed.
#include <fmt/core.h>

#include "src/render/render_files.hpp"

namespace ddl {

namespace {

// Ranks placed on each host of the plan, in host order.
std::vector<int> ranks_per_host(const Plan& plan) {
  std::vector<int> counts(plan.hosts.size(), 0);
  for (const auto& slot : plan.ranks) {
    ++counts.at(slot.host_index);
  }
  return counts;
}

// Hostfiles name hosts as given (the name, which MPI's rsh agent and pdsh
// receive) with as many slots as the plan puts there.
// In "host:N" an IPv6 address is bracketed ("[fe80::1]:2").
std::string hostfile_lines(const Plan& plan, std::string_view separator, bool bracket_v6) {
  const auto counts = ranks_per_host(plan);
  std::string out;
  for (std::size_t i = 0; i < plan.hosts.size(); ++i) {
    const std::string& name = plan.hosts[i].name;
    const bool v6 = bracket_v6 && name.find(':') != std::string::npos;
    out += fmt::format("{}{}{}{}{}\n", v6 ? "[" : "", name, v6 ? "]" : "", separator, counts[i]);
  }
  return out;
}

} // namespace

std::string openmpi_hostfile(const Plan& plan) { return hostfile_lines(plan, " slots=", false); }
std::string mpich_hostfile(const Plan& plan) { return hostfile_lines(plan, ":", true); }
std::string deepspeed_hostfile(const Plan& plan) { return hostfile_lines(plan, " slots=", false); }

} // namespace ddl
