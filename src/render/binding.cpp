// SPDX-License-Identifier: MIT
#include "src/render/binding.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/core.h>

#include "src/render/team_env.hpp"
#include "src/util/table.hpp"

namespace ddl {

namespace {

// The host's CPUs node by node (cores of one node stay together in a share).
std::vector<int> cpus_by_node(const HostTopology& topology) {
  if (topology.nodes.empty()) {
    return topology.cpus;
  }
  std::vector<int> cpus;
  for (const NumaNode& node : topology.nodes) {
    cpus.insert(cpus.end(), node.cpus.begin(), node.cpus.end());
  }
  return cpus;
}

RankBinding core_share(const HostTopology& topology, const RankSlot& slot) {
  const std::vector<int> cpus = cpus_by_node(topology);
  const auto count = static_cast<int>(cpus.size());
  const int ranks = std::max(slot.local_size, 1);
  if (count < ranks) {
    return {{cpus[static_cast<std::size_t>(slot.local_rank % count)]},
            fmt::format("{} ranks share the host's {} CPU{}", ranks, count, count == 1 ? "" : "s")};
  }
  const int share = count / ranks;
  const int extra = count % ranks;
  const int first = slot.local_rank * share + std::min(slot.local_rank, extra);
  const int size = share + (slot.local_rank < extra ? 1 : 0);
  return {{cpus.begin() + first, cpus.begin() + first + size},
          fmt::format("share {} of {} of the host's {} CPUs", slot.local_rank + 1, ranks, count)};
}

// The host's nodes; a host that shows none is one node of all its CPUs.
std::vector<NumaNode> nodes_of(const HostTopology& topology) {
  return topology.nodes.empty() ? std::vector<NumaNode>{{0, topology.cpus}} : topology.nodes;
}

RankBinding numa_block(const HostTopology& topology, const RankSlot& slot) {
  const std::vector<NumaNode> nodes = nodes_of(topology);
  const auto count = static_cast<long long>(nodes.size());
  const auto index = static_cast<std::size_t>(slot.local_rank * count / std::max(slot.local_size, 1));
  const NumaNode& node = nodes[std::min(index, nodes.size() - 1)];
  return {node.cpus, fmt::format("NUMA node {}", node.id)};
}

RankBinding gpu_node(const HostTopology& topology, const RankSlot& slot) {
  if (slot.gpus.empty()) {
    RankBinding numa = numa_block(topology, slot);
    numa.why += " (the rank has no GPU: bound as numa)";
    return numa;
  }
  const int gpu = slot.gpus.front();
  auto found = topology.gpu_nodes.find(gpu);
  const std::vector<NumaNode> nodes = nodes_of(topology);
  auto node = found == topology.gpu_nodes.end()
                  ? nodes.end()
                  : std::ranges::find(nodes, found->second, &NumaNode::id);
  if (node == nodes.end()) {
    RankBinding numa = numa_block(topology, slot);
    numa.why += fmt::format(" (GPU {}'s NUMA node is unknown: bound as numa)", gpu);
    return numa;
  }
  return {node->cpus, fmt::format("NUMA node {} of GPU {}", node->id, gpu)};
}

const HostTopology* topology_of(const LaunchContext& ctx, std::size_t host_index) {
  return host_index < ctx.topologies.size() ? &ctx.topologies[host_index] : nullptr;
}

bool user_sets_threads(const JobSpec& job, const Host& host) {
  constexpr std::string_view name = "OMP_NUM_THREADS";
  auto named = [&](const EnvList& env) { return std::ranges::any_of(env, [&](const auto& kv) { return kv.first == name; }); };
  const char* launcher = std::getenv("OMP_NUM_THREADS");
  return user_sets_env(job, name) || named(host_env_for(job, host)) || (launcher != nullptr && *launcher != '\0');
}

} // namespace

RankBinding rank_binding(const JobSpec& job, const Plan& plan, int rank, const LaunchContext& ctx) {
  if (job.launch.bind == CpuBind::none) {
    return {};
  }
  const RankSlot& slot = plan.ranks.at(static_cast<std::size_t>(rank));
  const HostTopology* topology = topology_of(ctx, slot.host_index);
  if (topology == nullptr || !topology->known()) {
    return {{}, "unbound: " + (topology == nullptr ? std::string("the host's topology was not read") : topology->why)};
  }
  switch (job.launch.bind) {
  case CpuBind::core: return core_share(*topology, slot);
  case CpuBind::numa: return numa_block(*topology, slot);
  case CpuBind::gpu: return gpu_node(*topology, slot);
  case CpuBind::none: break;
  }
  return {};
}

void set_bound_threads(EnvList& env, const JobSpec& job, const Host& host, const RankBinding& binding) {
  if (binding.cpus.empty() || user_sets_threads(job, host)) {
    return;
  }
  std::erase_if(env, [](const auto& kv) { return kv.first == "OMP_NUM_THREADS"; });
  env.emplace_back("OMP_NUM_THREADS", std::to_string(binding.cpus.size()));
}

std::string bindings_text(const JobSpec& job, const Plan& plan, const LaunchContext& ctx) {
  if (job.launch.bind == CpuBind::none) {
    return {};
  }
  std::vector<TableRow> rows{{"RANK", "HOST", "CPUS", "WHY"}};
  for (const RankSlot& slot : plan.ranks) {
    RankBinding binding = rank_binding(job, plan, slot.rank, ctx);
    rows.push_back({std::to_string(slot.rank), plan.hosts[slot.host_index].name,
                    binding.cpus.empty() ? "-" : cpu_list_text(binding.cpus), binding.why});
  }
  return fmt::format("\nCPU binding (bind = {}, from each host's topology):\n{}", to_string(job.launch.bind),
                     align_columns(rows));
}

std::vector<std::string> pinned_argv(const std::vector<std::string>& argv, const std::vector<int>& cpus,
                                     const std::string& ddl) {
  if (cpus.empty()) {
    return argv;
  }
  std::vector<std::string> pinned{ddl, "pin", cpu_list_text(cpus), "--"};
  pinned.insert(pinned.end(), argv.begin(), argv.end());
  return pinned;
}

} // namespace ddl
