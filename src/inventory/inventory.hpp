// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "src/util/error.hpp"
#include "src/job/hostlist.hpp"
#include "src/job/job.hpp"

namespace ddl {

// One machine that ranks run on.
struct Host {
  std::string name;      // as given (list, hostfile, pod name)
  std::string address;   // what to connect to; = name unless known otherwise
  int slots = 1;
  std::vector<int> gpus; // GPU indices known for this host (may be empty)
  std::string source;    // "list", "hostfile", "slurm", "script", "local", "kubernetes"
  std::string user{};       // "user@host" in a list: the ssh login ("" = [ssh] user)
  std::optional<int> port{};  // "host:port:slots" in a list: the ssh port
  Labels labels{};       // key=value words, node labels, Slurm features
  std::string labels_error{};  // why its source's labels could not be read ("" = read, or not asked)
  bool gpus_probed = false;    // `gpus` is what a GPU probe found there (empty: the host has none)
};

// "ml@10.0.0.5:2222" (brackets around an IPv6 address with a port), or the
// address alone when the host names no user and no port.
std::string login_address(const Host& host);

// `host` as a host spec: its name, login, slots, labels and GPU ids.
HostSpec host_spec_of(const Host& host);

using Inventory = std::vector<Host>;


// Hostfiles: OpenMPI/DeepSpeed ("host slots=N", "#" comments) and MPICH
// ("host:N"). Errors name `origin`:LINE. Duplicate hosts are an error.
Result<std::vector<HostSpec>> parse_hostfile(std::string_view text, const std::string& origin);

// --include / --exclude (HostsSection::include, exclude) applied: DeepSpeed's
// rules. A host named with slots keeps (include) or loses (exclude) those
// slot ids, which become its GPUs; one named alone is kept or dropped whole.
// A name or slot the hosts lack, or no host left, is a usage error. Then
// max_hosts keeps the first hosts and slots_each sets every host's slots.
Result<Inventory> filter_hosts(Inventory hosts, const HostsSection& section);

// "2(x3),1" -> {2,2,2,1}.
Result<std::vector<int>> parse_slurm_tasks_per_node(std::string_view text);

// Reads the Slurm allocation from the environment.
Result<Inventory> slurm_inventory(const std::function<const char*(const char*)>& getenv_fn);

// `scontrol -o show node` output (one node a line): node name -> its
// ActiveFeatures ("(null)": none), in scontrol's order.
std::map<std::string, std::vector<std::string>> parse_node_features(std::string_view scontrol_output);

// A host source could not read the labels `need` asks for (`error`): a
// stop (Ctrl-C) stays one; `ddl hosts` warns "SHOWN_AS: why" and goes on
// without them, each host's labels_error set; a [placement] that uses them stops (ExitCode::launch)
// naming `what` was not read, and `hint`.
Result<void> labels_unread(Inventory& hosts, LabelNeed need, const Error& error, std::string_view shown_as,
                           std::string_view what, std::string_view hint);

// Labels of the allocation's hosts as `need` asks (none: nothing, no call):
// partition=P from SLURM_JOB_PARTITION, and feature.F=true for each
// ActiveFeature F of the node, from one `scontrol -o show node NODELIST`.
// When scontrol fails: shown, a warning; required, ExitCode::launch.
Result<void> add_slurm_labels(Inventory& hosts, const std::function<const char*(const char*)>& getenv_fn,
                              LabelNeed need);

// Runs the discovery script (bounded by `timeout`), parses host[:slots] lines.
Result<Inventory> script_inventory(const std::string& script, Millis timeout, int default_slots);

// Counts local GPUs (nvidia-smi or /proc/driver/nvidia/gpus), 0 when none
// (and when stop::requested() cut nvidia-smi short: the caller checks).
int local_gpu_count();

// SLURM_JOB_ID is set (salloc, sbatch, srun): ddl runs inside an allocation.
bool inside_slurm_allocation();

// The job's hosts are the Slurm allocation: [hosts] slurm = true (--slurm),
// or the key absent, no other host source, and inside an allocation.
bool uses_slurm_allocation(const JobSpec& job);

// Finds the hosts for `job` from its one host source (-H / list, hostfile,
// slurm, discovery script); none: the Slurm allocation when inside one and
// [hosts] slurm is not false, else this machine alone. Kubernetes pods and
// slots = "gpus" probing are done by the backends before the plan.
Result<Inventory> discover_hosts(const JobSpec& job);

} // namespace ddl
