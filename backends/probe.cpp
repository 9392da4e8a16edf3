// SPDX-License-Identifier: MIT
#include "backends/probe.hpp"

#include <filesystem>

#include <fmt/core.h>

#include "backends/ssh/ssh_probe.hpp"
#include "ddl_version.hpp"

namespace ddl {

namespace {

HostCheck local_check() {
  HostCheck check;
  check.reachable = true;
  check.ddl_version = DDL_VERSION;
  check.gpu_count = local_gpu_count();
  return check;
}

} // namespace

std::vector<HostCheck> check_hosts(const JobSpec& job, const Inventory& hosts) {
  switch (job.launch.backend) {
    case BackendKind::ssh:
    case BackendKind::mpirun:
      return ssh_check_hosts(job, hosts);
    case BackendKind::local:
      return std::vector<HostCheck>(hosts.size(), local_check());
    case BackendKind::kubernetes:
      break;
  }
  HostCheck unsupported;
  unsupported.error = fmt::format("--check is not available for the {} backend", to_string(job.launch.backend));
  return std::vector<HostCheck>(hosts.size(), unsupported);
}

Result<Inventory> probe_gpu_slots(const JobSpec& job, Inventory hosts) {
  if (!job.hosts.slots_from_gpus) {
    return hosts;
  }
  if (job.launch.backend == BackendKind::ssh || job.launch.backend == BackendKind::mpirun) {
    return ssh_probe_gpu_slots(job, std::move(hosts));
  }
  if (job.launch.backend == BackendKind::local) {
    int count = local_gpu_count();
    if (count <= 0) {
      return fail(ExitCode::launch, "slots = \"gpus\": no GPU found on this machine");
    }
    for (auto& host : hosts) {
      host.slots = count;
      host.gpus.clear();
      for (int g = 0; g < count; ++g) {
        host.gpus.push_back(g);
      }
    }
  }
  return hosts;
}

} // namespace ddl
