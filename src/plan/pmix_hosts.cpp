// SPDX-License-Identifier: MIT
#include "src/plan/pmix_hosts.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace ddl {

Result<PmixHosts> pmix_hosts(const Plan& ranks) {
  PmixHosts out;
  out.plan.job = ranks.job;
  out.plan.placement = ranks.placement;
  out.plan.left_out = ranks.left_out;
  std::vector<std::size_t> seen;  // rank-plan host index of each gang host
  for (const RankSlot& slot : ranks.ranks) {
    if (!seen.empty() && seen.back() == slot.host_index) {
      ++out.ranks.back();
      auto& gpus = out.plan.ranks.back().gpus;
      gpus.insert(gpus.end(), slot.gpus.begin(), slot.gpus.end());
      continue;
    }
    const Host& host = ranks.hosts.at(slot.host_index);
    if (std::ranges::find(seen, slot.host_index) != seen.end()) {
      return fail(ExitCode::usage, fmt::format("mpi.launch \"pmix\": the ranks of host {} are not adjacent "
                                               "in the plan (MPI ranks fill hosts in order)",
                                               host.name));
    }
    const int index = static_cast<int>(seen.size());
    seen.push_back(slot.host_index);
    out.plan.hosts.push_back(host);
    out.ranks.push_back(1);
    RankSlot gang;
    gang.rank = index;
    gang.host_index = static_cast<std::size_t>(index);
    gang.local_size = 1;
    gang.node_rank = index;
    gang.cross_rank = index;
    gang.gpus = slot.gpus;
    out.plan.ranks.push_back(std::move(gang));
  }
  out.plan.world_size = static_cast<int>(out.plan.ranks.size());
  for (RankSlot& slot : out.plan.ranks) {
    slot.cross_size = out.plan.world_size;
  }
  return out;
}

} // namespace ddl
