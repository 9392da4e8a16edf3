// SPDX-License-Identifier: MIT
#pragma once

// The environment of each rank (DESIGN.md "Env every rank gets"): the
// generic DDL_* variables, then each framework's (src/render/frameworks/),
// GPUs and the host's interface, then the job's own.

#include <string>
#include <string_view>
#include <vector>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render_interfaces.hpp"
#include "src/util/env.hpp"
#include "src/util/topology.hpp"

namespace ddl {

// What is known only at launch time; --dry-run and render use placeholders.
struct LaunchContext {
  int attempt = 0;
  std::string rendezvous = "<rendezvous>";   // host:port workers dial
  std::string token = "<redacted>";          // the job secret
  int master_port = 0;                       // torch.master_port, resolved
  std::string backend;                       // as chosen ("ssh (auto: ...)");
                                             // "" = the job's [launch] backend
  // Where torch ranks write TORCHELASTIC_ERROR_FILE (rank_log_path's
  // error_json); "" = not set (ranks whose files ddl cannot read back).
  std::string error_dir;
  // Horovod's gloo rendezvous (HOROVOD_GLOO_RENDEZVOUS_ADDR/PORT and the
  // gloo controller); off where the ranks form an MPI world (mpirun).
  bool horovod_gloo = true;
  std::string horovod_address = "<rendezvous-address>";
  std::string horovod_port = "<horovod-port>";
  // The singleton guard (src/render/frameworks/mpi.hpp): more than one rank
  // started alone, outside any MPI launcher.
  bool singleton_guard = false;
  // Per plan host (plan.hosts order); empty or a nameless entry: none set.
  std::vector<HostInterface> interfaces;
  // [launch] bind: per plan host, its CPUs (src/render/binding.hpp); empty
  // or an unknown entry: its ranks run unbound.
  std::vector<HostTopology> topologies;
  // [container]: the last word of each container's name, the same for every
  // rank of one launch ("ddl-JOB-RANK-aATTEMPT-TAG").
  std::string container_tag = "tag";
};

// One rank as each framework's variables see it.
struct RankView {
  const RankSlot& slot;
  const Host& host;
  int world;
  int nodes;
};

inline constexpr const char* k_redacted = "<redacted>";

// True when the user sets `name` for the ranks: in [job] env, -x or the env
// file, or through env_pass from the launcher's environment. ddl's defaults
// (TORCH_NCCL_ASYNC_ERROR_HANDLING, ...) then stay out of the way.
bool user_sets_env(const JobSpec& job, std::string_view name);

// The env ddl sets for `rank`: generic DDL_*, each framework of the job,
// CUDA_VISIBLE_DEVICES (bind_gpus), its host's interface
// (k_interface_variables), then job.env, the env file, its host's
// [host_env] and -x (src/render/team_env.hpp), and OMP_NUM_THREADS for a
// bound rank (src/render/binding.hpp). Not env_pass.
EnvList rank_env(const JobSpec& job, const Plan& plan, int rank, const LaunchContext& ctx);

// The variables of the launcher's own environment that `env_pass` selects.
EnvList passed_env(const JobSpec& job, char** environ_ptr);

// Whether `name` is one ddl sets only where the user does not: a value from
// env_pass (the launcher's environment) keeps it (job.env always wins).
bool is_user_overridable_default(std::string_view name);

// "0,1,3".
std::string join_ints(const std::vector<int>& values);

} // namespace ddl
