// SPDX-License-Identifier: MIT
#include "src/render/frameworks/jax.hpp"

#include <string>
#include <vector>

namespace ddl {

namespace {

std::string coordinator(const JobSpec& job, const Plan& plan, const LaunchContext& ctx) {
  const int port = ctx.master_port != 0 ? ctx.master_port : job.torch.master_port;
  return bracket_ipv6(plan.hosts.front().address) + ":" +
         (port != 0 ? std::to_string(port + k_jax_coordinator_offset) : "<free-port>");
}

// With CUDA_VISIBLE_DEVICES set, the rank's GPUs are renumbered 0..n-1; without
// GPUs, JAX's own default ([local process id]) is spelled out.
std::string device_ids(const JobSpec& job, const RankSlot& slot) {
  if (job.launch.bind_gpus && !slot.gpus.empty()) {
    std::vector<int> ids(slot.gpus.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      ids[i] = static_cast<int>(i);
    }
    return join_ints(ids);
  }
  return std::to_string(slot.local_rank);
}

} // namespace

void add_jax_env(EnvList& env, const JobSpec& job, const Plan& plan, const RankView& r, const LaunchContext& ctx) {
  env.emplace_back("JAX_COORDINATOR_ADDRESS", coordinator(job, plan, ctx));
  env.emplace_back("JAX_NUM_PROCESSES", std::to_string(r.world));
  env.emplace_back("JAX_PROCESS_ID", std::to_string(r.slot.rank));
  env.emplace_back("JAX_LOCAL_DEVICE_IDS", device_ids(job, r.slot));
}

} // namespace ddl
