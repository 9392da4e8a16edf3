// SPDX-License-Identifier: MIT
#include "backends/registry.hpp"

#include <fmt/core.h>

#include "backends/kubernetes/kubernetes_backend.hpp"
#include "backends/local/local_backend.hpp"
#include "backends/mpirun/mpirun_backend.hpp"
#include "backends/ssh/ssh_backend.hpp"

namespace ddl {

namespace {

std::string_view backend_name(BackendKind kind) {
  switch (kind) {
  case BackendKind::local: return "local";
  case BackendKind::ssh: return "ssh";
  case BackendKind::kubernetes: return "kubernetes";
  case BackendKind::mpirun: return "mpirun";
  }
  return "unknown";
}

// Stands in for a backend that is not built yet: every launch fails clearly.
class UnavailableBackend final : public Backend {
public:
  explicit UnavailableBackend(BackendKind kind) : kind_(kind) {}
  Result<void> prepare(const Plan&) override { return failure(); }
  Result<void> start(const RankLaunch&, RankEvents&) override { return failure(); }
  void signal(int, int) override {}
  void shutdown() override {}

private:
  Result<void> failure() const {
    return fail(ExitCode::launch, fmt::format("backend {} is not available yet", backend_name(kind_)));
  }
  BackendKind kind_;
};

using BackendFactory = std::unique_ptr<Backend> (*)(const JobSpec& job);

struct BackendEntry {
  BackendKind kind;
  BackendFactory make;
};

// One line per backend; a backend missing here is reported as unavailable.
constexpr BackendEntry k_backends[] = {
    {BackendKind::local, [](const JobSpec&) -> std::unique_ptr<Backend> { return std::make_unique<LocalBackend>(); }},
    {BackendKind::ssh, [](const JobSpec& job) -> std::unique_ptr<Backend> { return std::make_unique<SshBackend>(job); }},
    {BackendKind::kubernetes,
     [](const JobSpec& job) -> std::unique_ptr<Backend> { return std::make_unique<kubernetes::KubernetesBackend>(job); }},
    {BackendKind::mpirun,
     [](const JobSpec& job) -> std::unique_ptr<Backend> { return std::make_unique<mpirun::MpirunBackend>(job); }},
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
