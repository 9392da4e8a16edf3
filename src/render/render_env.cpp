// SPDX-License-Identifier: MIT
// The environment each rank gets (DESIGN.md "Env every rank gets").
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <fmt/core.h>

#include "src/render/binding.hpp"
#include "src/render/render.hpp"
#include "src/render/team_env.hpp"
#include "src/util/json.hpp"

namespace ddl {

namespace {

std::string join_ints(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += (i == 0 ? "" : ",") + std::to_string(values[i]);
  }
  return out;
}

// torch.master_port as launched: resolved by the launcher, else the job's.
// 0 ("pick a free port") is shown as a placeholder until launch time.
std::string master_port(const JobSpec& job, const LaunchContext& ctx) {
  const int port = ctx.master_port != 0 ? ctx.master_port : job.torch.master_port;
  return port != 0 ? std::to_string(port) : "<free-port>";
}

// JAX's coordinator listens next to torch's store, on master_port + 1.
std::string jax_coordinator(const JobSpec& job, const Plan& plan, const LaunchContext& ctx) {
  const int port = ctx.master_port != 0 ? ctx.master_port : job.torch.master_port;
  const std::string& host = plan.hosts.front().address;
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return shown + ":" + (port != 0 ? std::to_string(port + 1) : "<free-port>");
}

struct RankView {
  const RankSlot& slot;
  const Host& host;
  int world;
  int nodes;
};

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

bool glob_match(std::string_view pattern, std::string_view name);

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
    env.emplace_back("TORCHELASTIC_ERROR_FILE", rank_error_file(ctx.error_dir, r.slot.rank, ctx.attempt));
  }
}

void add_torch(EnvList& env, const JobSpec& job, const Plan& plan, const RankView& r,
               const LaunchContext& ctx) {
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

// What horovodrun sets for its gloo mode: the HTTP rendezvous, the gloo
// controller and CPU operations, and its timeout (ddl's rendezvous timeout).
void add_horovod_gloo(EnvList& env, const JobSpec& job, const LaunchContext& ctx) {
  const std::string& address = ctx.horovod_address;
  env.emplace_back("HOROVOD_GLOO_RENDEZVOUS_ADDR", address.find(':') != std::string::npos ? "[" + address + "]" : address);
  env.emplace_back("HOROVOD_GLOO_RENDEZVOUS_PORT", ctx.horovod_port);
  env.emplace_back("HOROVOD_CONTROLLER", "gloo");
  env.emplace_back("HOROVOD_CPU_OPERATIONS", "gloo");
  const auto seconds = (job.rendezvous.timeout.count() + 999) / 1000;
  env.emplace_back("HOROVOD_GLOO_TIMEOUT_SECONDS", std::to_string(std::max<long long>(seconds, 1)));
}

void add_horovod(EnvList& env, const RankView& r) {
  env.emplace_back("HOROVOD_RANK", std::to_string(r.slot.rank));
  env.emplace_back("HOROVOD_SIZE", std::to_string(r.world));
  env.emplace_back("HOROVOD_LOCAL_RANK", std::to_string(r.slot.local_rank));
  env.emplace_back("HOROVOD_LOCAL_SIZE", std::to_string(r.slot.local_size));
  env.emplace_back("HOROVOD_CROSS_RANK", std::to_string(r.slot.cross_rank));
  env.emplace_back("HOROVOD_CROSS_SIZE", std::to_string(r.slot.cross_size));
  env.emplace_back("HOROVOD_HOSTNAME", r.host.name);
}

// With CUDA_VISIBLE_DEVICES set, the rank's GPUs are renumbered 0..n-1; without
// GPUs, JAX's own default ([local process id]) is spelled out.
std::string jax_device_ids(const JobSpec& job, const RankSlot& slot) {
  if (job.launch.bind_gpus && !slot.gpus.empty()) {
    std::vector<int> ids(slot.gpus.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      ids[i] = static_cast<int>(i);
    }
    return join_ints(ids);
  }
  return std::to_string(slot.local_rank);
}

void add_jax(EnvList& env, const JobSpec& job, const Plan& plan, const RankView& r,
             const LaunchContext& ctx) {
  env.emplace_back("JAX_COORDINATOR_ADDRESS", jax_coordinator(job, plan, ctx));
  env.emplace_back("JAX_NUM_PROCESSES", std::to_string(r.world));
  env.emplace_back("JAX_PROCESS_ID", std::to_string(r.slot.rank));
  env.emplace_back("JAX_LOCAL_DEVICE_IDS", jax_device_ids(job, r.slot));
}

void add_mpi(EnvList& env, const RankView& r) {
  env.emplace_back("OMPI_COMM_WORLD_RANK", std::to_string(r.slot.rank));
  env.emplace_back("OMPI_COMM_WORLD_SIZE", std::to_string(r.world));
  env.emplace_back("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r.slot.local_rank));
  env.emplace_back("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(r.slot.local_size));
  env.emplace_back("PMI_RANK", std::to_string(r.slot.rank));
  env.emplace_back("PMI_SIZE", std::to_string(r.world));
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

std::string rank_error_file(const std::string& dir, int rank, int attempt) {
  return fmt::format("{}/rank-{}.attempt-{}.error.json", dir, rank, attempt);
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
    case Framework::torch: add_torch(env, job, plan, view, ctx); break;
    case Framework::tensorflow: env.emplace_back("TF_CONFIG", tf_config(job, plan, rank)); break;
    case Framework::horovod:
      add_horovod(env, view);
      if (ctx.horovod_gloo) add_horovod_gloo(env, job, ctx);
      break;
    case Framework::jax: add_jax(env, job, plan, view, ctx); break;
    case Framework::mpi: add_mpi(env, view); break;
    }
  }
  if (job.launch.bind_gpus && !slot.gpus.empty()) {
    env.emplace_back("CUDA_VISIBLE_DEVICES", join_ints(slot.gpus));
  }
  add_interface(env, ctx, slot.host_index);
  for (const auto& [name, value] : job.env) {
    set_last(env, name, value);
  }
  add_team_env(env, job, view.host);
  set_bound_threads(env, job, view.host, rank_binding(job, plan, rank, ctx));
  return env;
}

bool is_user_overridable_default(std::string_view name) {
  constexpr std::array<std::string_view, 3> horovod = {"HOROVOD_CONTROLLER", "HOROVOD_CPU_OPERATIONS",
                                                       "HOROVOD_GLOO_TIMEOUT_SECONDS"};
  return std::ranges::find(k_interface_variables, name) != k_interface_variables.end() ||
         std::ranges::find(horovod, name) != horovod.end();
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
      if (!seen && glob_match(pattern, name)) {
        matched.emplace_back(name, std::string(item.substr(eq + 1)));
      }
    }
    std::ranges::sort(matched);
    passed.insert(passed.end(), matched.begin(), matched.end());
  }
  return passed;
}

std::string tf_config(const JobSpec& job, const Plan& plan, int rank) {
  (void)job;
  // The evaluator is no member of the training cluster (TensorFlow's
  // RunConfig rejects one there; Kubeflow's TFJob leaves it out): it knows
  // itself by its task alone.
  Json cluster = Json::object();
  for (const char* role : {"chief", "worker", "ps"}) {
    Json members = Json::array();
    for (const auto& slot : plan.ranks) {
      if (slot.tf_role == role) {
        const std::string& address = plan.hosts[slot.host_index].address;
        const std::string host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
        members.push_back(host + ":" + std::to_string(slot.tf_port));
      }
    }
    if (!members.empty()) {
      cluster[role] = std::move(members);
    }
  }
  const auto& me = plan.ranks.at(static_cast<std::size_t>(rank));
  const Json doc = {{"cluster", std::move(cluster)}, {"task", {{"type", me.tf_role}, {"index", me.tf_index}}}};
  return to_json_text(doc);
}

} // namespace ddl
