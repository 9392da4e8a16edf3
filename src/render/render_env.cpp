// SPDX-License-Identifier: MIT
// The environment each rank gets (DESIGN.md "Env every rank gets").
#include <algorithm>
#include <cstdlib>
#include <string>

#include "src/render/render_env.hpp"
#include "src/render/frameworks/horovod.hpp"
#include "src/render/frameworks/jax.hpp"
#include "src/render/frameworks/mpi.hpp"
#include "src/render/frameworks/tensorflow.hpp"
#include "src/render/frameworks/torch.hpp"
#include "src/render/binding.hpp"
#include "src/render/team_env.hpp"
#include "src/util/json.hpp"

namespace ddl {

namespace {

// The GPU ids of every rank on the rank's host (DeepSpeed's launcher gives
// each rank all of them): the host's known GPUs, else 0..ranks-1.
std::vector<int> host_slot_ids(const RankView& r) {
  if (!r.host.gpus.empty()) {
    return r.host.gpus;
  }
  std::vector<int> ids;
  for (int i = 0; i < r.slot.local_size; ++i) {
    ids.push_back(i);
  }
  return ids;
}

void add_generic(EnvList& env, const JobSpec& job, const RankView& r, const LaunchContext& ctx) {
  env.emplace_back("DDL_RANK", std::to_string(r.slot.rank));
  env.emplace_back("DDL_WORLD_SIZE", std::to_string(r.world));
  env.emplace_back("DDL_LOCAL_RANK", std::to_string(r.slot.local_rank));
  env.emplace_back("DDL_LOCAL_SIZE", std::to_string(r.slot.local_size));
  env.emplace_back("DDL_NODE_RANK", std::to_string(r.slot.node_rank));
  env.emplace_back("DDL_NUM_NODES", std::to_string(r.nodes));
  env.emplace_back("DDL_HOST", r.host.name);
  env.emplace_back("DDL_JOB", job.name);
  env.emplace_back("DDL_ATTEMPT", std::to_string(ctx.attempt));
  env.emplace_back("DDL_RENDEZVOUS", ctx.rendezvous);
  env.emplace_back("DDL_TOKEN", ctx.token);
}

void add_interface(EnvList& env, const LaunchContext& ctx, std::size_t host_index) {
  if (host_index >= ctx.interfaces.size() || ctx.interfaces[host_index].name.empty()) {
    return;
  }
  for (std::string_view name : k_interface_variables) {
    env.emplace_back(std::string(name), ctx.interfaces[host_index].name);
  }
}

// job.env comes last and wins: an earlier entry of the same name is dropped.
void set_last(EnvList& env, const std::string& name, const std::string& value) {
  std::erase_if(env, [&](const auto& kv) { return kv.first == name; });
  env.emplace_back(name, value);
}

bool glob_match(std::string_view pattern, std::string_view name) {
  if (!pattern.empty() && pattern.back() == '*') {
    return name.starts_with(pattern.substr(0, pattern.size() - 1));
  }
  return pattern == name;
}

} // namespace

std::string join_ints(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += (i == 0 ? "" : ",") + std::to_string(values[i]);
  }
  return out;
}

bool user_sets_env(const JobSpec& job, std::string_view name) {
  auto named = [&](const auto& kv) { return kv.first == name; };
  if (std::ranges::any_of(job.env, named) || std::ranges::any_of(job.env_file_vars, named)) {
    return true;
  }
  const std::string key(name);
  return std::getenv(key.c_str()) != nullptr &&
         std::ranges::any_of(job.env_pass, [&](const auto& pattern) { return glob_match(pattern, name); });
}

EnvList rank_env(const JobSpec& job, const Plan& plan, int rank, const LaunchContext& ctx) {
  const auto& slot = plan.ranks.at(static_cast<std::size_t>(rank));
  const RankView view{slot, plan.hosts.at(slot.host_index), plan.world_size,
                      static_cast<int>(plan.hosts.size())};
  EnvList env;
  add_generic(env, job, view, ctx);
  for (Framework framework : job.frameworks) {
    switch (framework) {
    case Framework::torch: add_torch_env(env, job, plan, view, ctx); break;
    case Framework::tensorflow: add_tensorflow_env(env, job, plan, rank); break;
    case Framework::horovod: add_horovod_env(env, job, view, ctx); break;
    case Framework::jax: add_jax_env(env, job, plan, view, ctx); break;
    case Framework::mpi: add_mpi_env(env, view); break;
    }
  }
  if (job.launch.bind_gpus && !slot.gpus.empty()) {
    env.emplace_back("CUDA_VISIBLE_DEVICES", join_ints(slot.gpus));
  } else if (job.launch.host_gpus) {
    env.emplace_back("CUDA_VISIBLE_DEVICES", join_ints(host_slot_ids(view)));
  }
  add_interface(env, ctx, slot.host_index);
  // watchdog.dump = "auto" falls back to SIGABRT, which makes a Python rank
  // print every thread's stack only with its faulthandler on.
  if (job.watchdog.enabled() && job.watchdog.dump_signal == 0 && job.watchdog.dump_tool == DumpTool::automatic &&
      !user_sets_env(job, "PYTHONFAULTHANDLER")) {
    env.emplace_back("PYTHONFAULTHANDLER", "1");
  }
  if (ctx.singleton_guard) {
    add_singleton_guard(env, job);
  }
  for (const auto& [name, value] : job.env) {
    set_last(env, name, value);
  }
  add_team_env(env, job, view.host);
  set_bound_threads(env, job, view.host, rank_binding(job, plan, rank, ctx));
  return env;
}

bool is_user_overridable_default(std::string_view name) {
  return std::ranges::find(k_interface_variables, name) != k_interface_variables.end() || is_horovod_default(name);
}

EnvList passed_env(const JobSpec& job, char** environ_ptr) {
  EnvList passed;
  if (environ_ptr == nullptr) {
    return passed;
  }
  for (const auto& pattern : job.env_pass) {
    EnvList matched;
    for (char** entry = environ_ptr; *entry != nullptr; ++entry) {
      std::string_view item(*entry);
      const auto eq = item.find('=');
      if (eq == std::string_view::npos) {
        continue;
      }
      const std::string name(item.substr(0, eq));
      const bool seen = std::ranges::any_of(passed, [&](const auto& kv) { return kv.first == name; });
      // Only portable names: a shell's exported functions (BASH_FUNC_f%%) cannot reach a remote rank's sh.
      if (!seen && is_env_name(name) && glob_match(pattern, name)) {
        matched.emplace_back(name, std::string(item.substr(eq + 1)));
      }
    }
    std::ranges::sort(matched);
    passed.insert(passed.end(), matched.begin(), matched.end());
  }
  return passed;
}

} // namespace ddl
