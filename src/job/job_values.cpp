// SPDX-License-Identifier: MIT
// Small value types of the job file: durations, names, enumerations.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include <fmt/core.h>

#include "src/job/job.hpp"

namespace ddl {

std::optional<std::string> host_name_problem(std::string_view name) {
  if (name.empty()) {
    return "is empty";
  }
  if (name[0] == '-') {
    return "starts with '-'";
  }
  static constexpr std::string_view metacharacters = "|&;<>()$`\\\"'*?[]#~{}!^=,";
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    if (c == ' ' || c == '\t') {
      return "contains a space";
    }
    if (byte < 0x20 || byte == 0x7f) {
      return "contains a control character";
    }
    if (byte >= 0x80) {
      return "contains a non-ASCII character";
    }
    if (metacharacters.find(c) != std::string_view::npos) {
      return fmt::format("contains the shell metacharacter '{}'", c);
    }
  }
  return std::nullopt;
}

std::string_view to_string(BackendKind kind) {
  switch (kind) {
  case BackendKind::automatic: return "auto";
  case BackendKind::local: return "local";
  case BackendKind::ssh: return "ssh";
  case BackendKind::kubernetes: return "kubernetes";
  case BackendKind::mpirun: return "mpirun";
  case BackendKind::slurm: return "slurm";
  }
  return "local";
}

bool uses_framework(const JobSpec& job, Framework framework) {
  return std::find(job.frameworks.begin(), job.frameworks.end(), framework) != job.frameworks.end();
}

std::string_view to_string(Framework framework) {
  switch (framework) {
  case Framework::torch: return "torch";
  case Framework::tensorflow: return "tensorflow";
  case Framework::horovod: return "horovod";
  case Framework::jax: return "jax";
  case Framework::mpi: return "mpi";
  }
  return "torch";
}

std::string_view to_string(HostKeyCheck check) {
  switch (check) {
  case HostKeyCheck::yes: return "yes";
  case HostKeyCheck::accept_new: return "accept-new";
  case HostKeyCheck::no: return "no";
  }
  return "yes";
}

std::string_view to_string(PlacementStrategy strategy) {
  switch (strategy) {
  case PlacementStrategy::in_order: return "in order";
  case PlacementStrategy::pack: return "pack";
  case PlacementStrategy::spread: return "spread";
  }
  return "in order";
}

std::optional<BackendKind> parse_backend(std::string_view text) {
  for (auto kind : {BackendKind::automatic, BackendKind::local, BackendKind::ssh,
                    BackendKind::kubernetes, BackendKind::mpirun, BackendKind::slurm}) {
    if (to_string(kind) == text) {
      return kind;
    }
  }
  return std::nullopt;
}

std::string_view to_string(CpuBind bind) {
  switch (bind) {
  case CpuBind::none: return "none";
  case CpuBind::core: return "core";
  case CpuBind::numa: return "numa";
  case CpuBind::gpu: return "gpu";
  }
  return "none";
}

const std::vector<std::string>& bind_names() {
  static const std::vector<std::string> names = {"none", "core", "numa", "gpu"};
  return names;
}

std::string_view to_string(ContainerRuntime runtime) {
  switch (runtime) {
  case ContainerRuntime::podman: return "podman";
  case ContainerRuntime::docker: return "docker";
  case ContainerRuntime::apptainer: return "apptainer";
  case ContainerRuntime::custom: return "template";
  }
  return "podman";
}

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names = {"auto", "local", "ssh", "kubernetes", "mpirun", "slurm"};
  return names;
}

std::string_view to_string(MpiLaunch launch) {
  switch (launch) {
  case MpiLaunch::pmix: return "pmix";
  case MpiLaunch::automatic: return "auto";
  default: return "mpirun";
  }
}

std::optional<MpiLaunch> parse_mpi_launch(std::string_view text) {
  for (auto launch : {MpiLaunch::mpirun, MpiLaunch::pmix, MpiLaunch::automatic}) {
    if (to_string(launch) == text) {
      return launch;
    }
  }
  return std::nullopt;
}

const std::vector<std::string>& mpi_launch_names() {
  static const std::vector<std::string> names = {"mpirun", "pmix", "auto"};
  return names;
}

} // namespace ddl
