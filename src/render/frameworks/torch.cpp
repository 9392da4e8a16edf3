// SPDX-License-Identifier: MIT
#include "src/render/frameworks/torch.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "src/render/frameworks/jax.hpp"
#include "src/util/rank_logs.hpp"

namespace ddl {

namespace {

// torch.master_port as launched: resolved by the launcher, else the job's.
// 0 ("pick a free port") is shown as a placeholder until launch time.
std::string master_port(const JobSpec& job, const LaunchContext& ctx) {
  const int port = ctx.master_port != 0 ? ctx.master_port : job.torch.master_port;
  return port != 0 ? std::to_string(port) : "<free-port>";
}

// torchrun's rule: the launcher's OMP_NUM_THREADS is copied, else one thread
// each when several ranks share a host. job.env, applied later, wins anyway.
std::optional<std::string> omp_threads(const JobSpec& job, const RankSlot& slot) {
  if (std::ranges::any_of(job.env, [](const auto& kv) { return kv.first == "OMP_NUM_THREADS"; })) {
    return std::nullopt;
  }
  const char* value = std::getenv("OMP_NUM_THREADS");
  if (value != nullptr && *value != '\0') {
    return std::string(value);
  }
  if (slot.local_size > 1) {
    return "1";
  }
  return std::nullopt;
}

// torchrun's defaults: NCCL errors abort the process group instead of
// hanging it (both the 2.x and the 1.x name), and a per-rank error file that
// torch's @record writes the exception into.
void add_torch_defaults(EnvList& env, const JobSpec& job, const RankView& r, const LaunchContext& ctx) {
  for (const char* name : {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"}) {
    if (!user_sets_env(job, name)) {
      env.emplace_back(name, "1");
    }
  }
  if (!ctx.error_dir.empty() && !user_sets_env(job, "TORCHELASTIC_ERROR_FILE")) {
    env.emplace_back("TORCHELASTIC_ERROR_FILE",
                     rank_log_path(ctx.error_dir, r.slot.rank, ctx.attempt, RankFile::error_json));
  }
}

} // namespace

int master_ports_needed(const JobSpec& job) {
  if (uses_framework(job, Framework::jax)) {
    return 1 + k_jax_coordinator_offset;
  }
  return uses_framework(job, Framework::torch) ? 1 : 0;
}

bool wants_error_files(const JobSpec& job, bool ranks_are_local) {
  return uses_framework(job, Framework::torch) && ranks_are_local && !user_sets_env(job, "TORCHELASTIC_ERROR_FILE");
}

void add_torch_env(EnvList& env, const JobSpec& job, const Plan& plan, const RankView& r, const LaunchContext& ctx) {
  env.emplace_back("MASTER_ADDR", plan.hosts.front().address);
  env.emplace_back("MASTER_PORT", master_port(job, ctx));
  env.emplace_back("RANK", std::to_string(r.slot.rank));
  env.emplace_back("WORLD_SIZE", std::to_string(r.world));
  env.emplace_back("LOCAL_RANK", std::to_string(r.slot.local_rank));
  env.emplace_back("LOCAL_WORLD_SIZE", std::to_string(r.slot.local_size));
  env.emplace_back("GROUP_RANK", std::to_string(r.slot.node_rank));
  env.emplace_back("GROUP_WORLD_SIZE", std::to_string(r.nodes));
  env.emplace_back("ROLE_RANK", std::to_string(r.slot.rank));
  env.emplace_back("ROLE_WORLD_SIZE", std::to_string(r.world));
  env.emplace_back("ROLE_NAME", "default");
  env.emplace_back("TORCHELASTIC_RESTART_COUNT", std::to_string(ctx.attempt));
  env.emplace_back("TORCHELASTIC_MAX_RESTARTS", std::to_string(job.max_restarts));
  env.emplace_back("TORCHELASTIC_RUN_ID", job.name);
  if (auto threads = omp_threads(job, r.slot)) {
    env.emplace_back("OMP_NUM_THREADS", *threads);
  }
  add_torch_defaults(env, job, r, ctx);
}

} // namespace ddl
