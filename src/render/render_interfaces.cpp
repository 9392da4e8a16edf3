// SPDX-License-Identifier: MIT
// The per-host network interface as --dry-run shows it.
#include <fmt/core.h>

#include "src/render/render_interfaces.hpp"
#include "src/util/table.hpp"

namespace ddl {

HostInterface interface_found(std::string name, std::string source, const std::string& target) {
  std::string why = source == target ? "it holds rank 0's address"
                                     : fmt::format("it holds {}, where this host's route to {} leaves from", source, target);
  return {std::move(name), std::move(source), std::move(why)};
}

HostInterface interface_unknown(std::string why) { return {"", "", std::move(why)}; }

std::string interfaces_text(const Plan& plan, const std::vector<HostInterface>& interfaces,
                            const std::string& target) {
  if (interfaces.empty()) {
    return {};
  }
  std::vector<TableRow> rows{{"HOST", "INTERFACE", "ADDRESS", "WHY"}};
  for (std::size_t h = 0; h < plan.hosts.size() && h < interfaces.size(); ++h) {
    const HostInterface& chosen = interfaces[h];
    rows.push_back({plan.hosts[h].name, chosen.name.empty() ? "-" : chosen.name,
                    chosen.address.empty() ? "-" : chosen.address, chosen.why});
  }
  return fmt::format("\nnetwork interface per host (toward rank 0 at {}; sets {}, {}, {}):\n{}", target,
                     k_interface_variables[0], k_interface_variables[1], k_interface_variables[2],
                     align_columns(rows));
}

} // namespace ddl
