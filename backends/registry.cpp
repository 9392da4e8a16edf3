// SPDX-License-Identifier: MIT
#include "backends/registry.hpp"

#include <filesystem>

#include <fmt/core.h>

#include "backends/kubernetes/kubernetes_backend.hpp"
#include "backends/local/local_backend.hpp"
#include "backends/mpirun/mpirun_backend.hpp"
#include "backends/ssh/ssh_backend.hpp"

namespace ddl {

namespace {

// Stands in for a backend that is not built yet: every launch fails clearly.
class UnavailableBackend final : public Backend {
public:
  explicit UnavailableBackend(BackendKind kind) : name_(to_string(kind)) {}
  std::string_view name() const override { return name_; }
  Result<void> prepare(const Plan&, std::span<const RankLaunch>) override { return failure(); }
  Result<void> start(const RankLaunch&, RankEvents&) override { return failure(); }
  void signal(int, int) override {}
  void shutdown() override {}

private:
  Result<void> failure() const {
    return fail(ExitCode::launch, fmt::format("backend {} is not available yet", name_));
  }
  std::string name_;
};

// True when the job's hosts are its pods: backend kubernetes, or backend
// mpirun with a [kubernetes] selector and no other host source.
bool pods_are_hosts(const JobSpec& job) {
  const HostsSection& hosts = job.hosts;
  bool other_source = !hosts.list.empty() || !hosts.hostfile.empty() || hosts.slurm ||
                      !hosts.discovery_script.empty();
  if (job.launch.backend == BackendKind::kubernetes) {
    return !other_source || !job.kubernetes.selector.empty();
  }
  return job.launch.backend == BackendKind::mpirun && !job.kubernetes.selector.empty() && !other_source;
}

// The slots of each pod when the job's hosts are its pods; nullopt else.
std::optional<int> pod_slots(const JobSpec& job) {
  if (!pods_are_hosts(job)) {
    return std::nullopt;
  }
  return job.hosts.slots.value_or(1);
}

std::string absolute_job_file(const JobSpec& job) {
  if (job.source.empty()) {
    return {};
  }
  std::error_code ec;
  return std::filesystem::absolute(job.source, ec).string();
}

std::unique_ptr<Backend> make_mpirun(const JobSpec& job) {
  mpirun::MpirunOptions options;
  options.job_file = absolute_job_file(job);
  // How `ddl rsh` (mpirun's agent) reaches the hosts.
  options.rsh_transport = job.kubernetes.selector.empty() ? "ssh" : "kubernetes";
  options.ssh = job.ssh;
  options.kubernetes = job.kubernetes;
  options.pod_slots = pod_slots(job);
  return std::make_unique<mpirun::MpirunBackend>(std::move(options));
}

using BackendFactory = std::unique_ptr<Backend> (*)(const JobSpec& job);

struct BackendEntry {
  BackendKind kind;
  BackendFactory make;
};

// One line per backend; a backend missing here is reported as unavailable.
constexpr BackendEntry k_backends[] = {
    {BackendKind::local, [](const JobSpec&) -> std::unique_ptr<Backend> { return std::make_unique<LocalBackend>(); }},
    {BackendKind::ssh,
     [](const JobSpec& job) -> std::unique_ptr<Backend> { return std::make_unique<SshBackend>(job.ssh); }},
    {BackendKind::kubernetes,
     [](const JobSpec& job) -> std::unique_ptr<Backend> {
       return std::make_unique<kubernetes::KubernetesBackend>(job.kubernetes, pod_slots(job));
     }},
    {BackendKind::mpirun, make_mpirun},
};

} // namespace

std::unique_ptr<Backend> make_backend(const JobSpec& job) {
  for (const auto& entry : k_backends) {
    if (entry.kind == job.launch.backend) {
      return entry.make(job);
    }
  }
  return std::make_unique<UnavailableBackend>(job.launch.backend);
}

} // namespace ddl
