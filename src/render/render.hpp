// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/util/topology.hpp"

namespace ddl {

// The network interface of one host for the job's traffic: the one holding
// the address that the host's own route to rank 0's address leaves from.
struct HostInterface {
  std::string name;     // "eth0"; "" when none was found
  std::string address;  // the address it holds, the one peers reach
  std::string why;      // how it was chosen, or why none was
  bool unreachable = false;  // the host could not be reached (the launch reports it)
};

// What ddl sets per host from HostInterface::name, unless the user sets it.
inline constexpr std::array<std::string_view, 3> k_interface_variables = {
    "GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "HOROVOD_GLOO_IFACE"};

// What is known only at launch time; --dry-run and render use placeholders.
struct LaunchContext {
  int attempt = 0;
  std::string rendezvous = "<rendezvous>";   // host:port workers dial
  std::string token = "<redacted>";          // the job secret
  int master_port = 0;                       // torch.master_port, resolved
  std::string backend;                       // as chosen ("ssh (auto: ...)");
                                             // "" = the job's [launch] backend
  // Where torch ranks write TORCHELASTIC_ERROR_FILE (rank_error_file);
  // "" = not set (ranks whose files ddl cannot read back).
  std::string error_dir;
  // Horovod's gloo rendezvous (HOROVOD_GLOO_RENDEZVOUS_ADDR/PORT and the
  // gloo controller); off where the ranks form an MPI world (mpirun).
  bool horovod_gloo = true;
  std::string horovod_address = "<rendezvous-address>";
  std::string horovod_port = "<horovod-port>";
  // Per plan host (plan.hosts order); empty or a nameless entry: none set.
  std::vector<HostInterface> interfaces;
  // [launch] bind: per plan host, its CPUs (src/render/binding.hpp); empty
  // or an unknown entry: its ranks run unbound.
  std::vector<HostTopology> topologies;
  // [container]: the last word of each container's name, the same for every
  // rank of one launch ("ddl-JOB-RANK-aATTEMPT-TAG").
  std::string container_tag = "tag";
};

// torch's error file of `rank` in `attempt` under `dir`
// ("DIR/rank-R.attempt-A.error.json", beside the --log-dir logs).
std::string rank_error_file(const std::string& dir, int rank, int attempt);

// True when the user sets `name` for the ranks: in [job] env, -x or the env
// file, or through env_pass from the launcher's environment. ddl's defaults
// (TORCH_NCCL_ASYNC_ERROR_HANDLING, ...) then stay out of the way.
bool user_sets_env(const JobSpec& job, std::string_view name);

inline constexpr const char* k_redacted = "<redacted>";

// The env ddl sets for `rank`: generic DDL_*, each framework of the job
// (torch: also TORCH_NCCL_ASYNC_ERROR_HANDLING=1, NCCL_ASYNC_ERROR_HANDLING=1
// and, with ctx.error_dir, TORCHELASTIC_ERROR_FILE, each unless user_sets_env),
// CUDA_VISIBLE_DEVICES (bind_gpus), its host's interface
// (k_interface_variables), then job.env, the env file, its host's
// [host_env] and -x (src/render/team_env.hpp), and OMP_NUM_THREADS for a
// bound rank (src/render/binding.hpp). Not env_pass.
EnvList rank_env(const JobSpec& job, const Plan& plan, int rank, const LaunchContext& ctx);

// The variables of the launcher's own environment that `env_pass` selects.
EnvList passed_env(const JobSpec& job, char** environ_ptr);

// TF_CONFIG for one rank (compact JSON): the same `cluster` of chief, worker
// and ps on every rank; the evaluator is not in it and has its task only.
// Whether `name` is one ddl sets only where the user does not: a value from
// env_pass (the launcher's environment) keeps it (job.env always wins).
bool is_user_overridable_default(std::string_view name);

// The interface `name` holding `source`, the address a host's route to
// `target` (rank 0's address) leaves from, with why it was chosen.
HostInterface interface_found(std::string name, std::string source, const std::string& target);
// No interface, and why.
HostInterface interface_unknown(std::string why);

// Per host, the interface chosen and why (what --dry-run prints after the
// plan table); "" when `interfaces` is empty.
std::string interfaces_text(const Plan& plan, const std::vector<HostInterface>& interfaces,
                            const std::string& target);

// TF_CONFIG for one rank (compact JSON).
std::string tf_config(const JobSpec& job, const Plan& plan, int rank);

std::string openmpi_hostfile(const Plan& plan);
std::string mpich_hostfile(const Plan& plan);
std::string deepspeed_hostfile(const Plan& plan);

// The plan as a table (what --dry-run and `render --format plan` print),
// handed to `write` piece by piece: 100k ranks make tens of MB of text.
void write_plan_table(const JobSpec& job, const Plan& plan, const LaunchContext& ctx,
                      const std::function<void(std::string_view)>& write);
std::string plan_table(const JobSpec& job, const Plan& plan, const LaunchContext& ctx);

// The whole plan as the JSON of DESIGN.md ("render --format json").
std::string plan_json(const JobSpec& job, const Plan& plan, const LaunchContext& ctx);

} // namespace ddl
