// SPDX-License-Identifier: MIT
// The inventory a command works on: Kubernetes pods for that backend, else the
// job's one host source (src/hosts.cpp). Shared by hosts, render and run so
// that they all see the same hosts.
#include "backends/kubernetes/kubectl.hpp"
#include "cmd/command.hpp"

namespace ddl::cmd {

Result<Inventory> inventory_for(const JobSpec& job) {
  if (job.launch.backend == BackendKind::kubernetes) {
    return kubernetes::kubernetes_inventory(job);
  }
  return discover_hosts(job);
}

} // namespace ddl::cmd
