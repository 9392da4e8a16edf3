// SPDX-License-Identifier: MIT
// discover_hosts: the one host source of a job, or this machine alone.
#include <cstdlib>
#include <fmt/core.h>
#include <unordered_map>

#include "src/inventory/inventory.hpp"
#include "src/util/file.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

Host host_from(const HostSpec& spec, int default_slots, const char* source) {
  return Host{spec.name, spec.name, spec.slots.value_or(default_slots), spec.gpus, source, spec.user, spec.port, spec.labels};
}

// A host listed again, as mpirun reads "-H a,a,b": its slots add up. Refused
// where that would be a guess: another login, or slots that are its GPUs.
Result<void> add_repeated_host(Host& first, const Host& again, const JobSpec& job) {
  if (first.user != again.user || first.port != again.port) {
    return fail(ExitCode::usage, fmt::format("host '{}' is listed twice with different logins ({} and {})",
                                             first.name, login_address(first), login_address(again)));
  }
  if (job.hosts.slots_from_gpus) {
    return fail(ExitCode::usage, fmt::format("host '{}' is listed twice; with hosts.slots = \"gpus\" its "
                                             "slots are its GPUs, so list it once",
                                             first.name));
  }
  if (first.slots + again.slots > k_max_world_size) {
    return fail(ExitCode::usage, fmt::format("host '{}' is listed with more than {} slots in all", first.name,
                                             k_max_world_size));
  }
  first.slots += again.slots;
  return {};
}

Result<Inventory> list_inventory(const JobSpec& job) {
  Inventory inventory;
  std::unordered_map<std::string, std::size_t> seen;
  for (const HostSpec& spec : job.hosts.list) {
    if (auto why = host_name_problem(spec.name)) {
      return fail(ExitCode::usage, fmt::format("bad host name {}: {}", quote_input(spec.name), *why));
    }
    Host host = host_from(spec, job.hosts.slots.value_or(1), "list");
    if (auto known = seen.find(spec.name); known != seen.end()) {
      if (auto added = add_repeated_host(inventory[known->second], host, job); !added) {
        return fail(added.error());
      }
      continue;
    }
    seen.emplace(spec.name, inventory.size());
    if (inventory.size() == k_max_hosts) {
      return fail(ExitCode::usage, fmt::format("more than {} hosts", k_max_hosts));
    }
    inventory.push_back(std::move(host));
  }
  return inventory;
}

Result<Inventory> hostfile_inventory(const JobSpec& job) {
  const std::string& path = job.hosts.hostfile;
  CappedRead file = read_capped(path, k_max_hostfile_bytes);
  if (file.status == CappedRead::Status::too_large) {
    return fail(ExitCode::usage, fmt::format("hostfile {} is larger than 16 MiB", path));
  }
  if (file.status != CappedRead::Status::ok) {
    return fail(ExitCode::usage, fmt::format("cannot read hostfile {}", path));
  }
  auto specs = parse_hostfile(file.text, path);
  if (!specs) {
    return fail(specs.error());
  }
  Inventory inventory;
  for (const auto& spec : *specs) {
    inventory.push_back(host_from(spec, job.hosts.slots.value_or(1), "hostfile"));
  }
  return inventory;
}

// No host source: this machine, with --np slots, else one per local GPU, else one.
Inventory local_inventory(const JobSpec& job) {
  Host host{"localhost", "127.0.0.1", 1, {}, "local"};
  const int gpus = local_gpu_count();
  for (int g = 0; g < gpus; ++g) {
    host.gpus.push_back(g);
  }
  if (job.launch.np.max) {
    host.slots = *job.launch.np.max;
  } else if (job.hosts.slots) {
    host.slots = *job.hosts.slots;
  } else if (gpus > 0) {
    host.slots = gpus;
  }
  return {host};
}

} // namespace

std::string login_address(const Host& host) { return format_login(host.user, host.address, host.port); }

HostSpec host_spec_of(const Host& host) {
  return HostSpec{host.name, host.slots, host.user, host.port, host.labels, host.gpus};
}

bool inside_slurm_allocation() {
  const char* job_id = std::getenv("SLURM_JOB_ID");
  return job_id != nullptr && *job_id != '\0';
}

bool uses_slurm_allocation(const JobSpec& job) {
  const HostsSection& hosts = job.hosts;
  if (hosts.slurm != SlurmHosts::automatic) {
    return hosts.slurm == SlurmHosts::on;
  }
  return hosts.list.empty() && hosts.hostfile.empty() && hosts.discovery_script.empty() &&
         inside_slurm_allocation();
}

Result<Inventory> discover_hosts(const JobSpec& job) {
  if (!job.hosts.list.empty()) {
    return list_inventory(job);
  }
  if (!job.hosts.hostfile.empty()) {
    return hostfile_inventory(job);
  }
  if (uses_slurm_allocation(job)) {
    auto getenv_fn = [](const char* name) { return std::getenv(name); };
    auto hosts = slurm_inventory(getenv_fn);
    if (hosts) {
      if (auto labelled = add_slurm_labels(*hosts, getenv_fn, label_need(job)); !labelled) {
        return fail(labelled.error());
      }
    }
    return hosts;
  }
  if (!job.hosts.discovery_script.empty()) {
    return script_inventory(job.hosts.discovery_script, job.hosts.discovery_timeout,
                            job.hosts.slots.value_or(1));
  }
  Inventory local = local_inventory(job);
  if (stop::requested()) {
    return fail(stop::error("probing the local GPUs (nvidia-smi)"));
  }
  return local;
}

} // namespace ddl
