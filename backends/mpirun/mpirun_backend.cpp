// SPDX-License-Identifier: MIT
#include "backends/mpirun/mpirun_backend.hpp"

#include <csignal>
#include <unistd.h>

#include <fmt/core.h>

#include "backends/child_process.hpp"
#include "backends/kubernetes/kubectl.hpp"
#include "backends/mpirun/mpirun_command.hpp"
#include "backends/mpirun/mpirun_output.hpp"
#include "backends/ssh/ssh_probe.hpp"
#include "src/render/render_files.hpp"
#include "src/util/net.hpp"
#include "src/util/process.hpp"
#include "src/util/text.hpp"

namespace ddl::mpirun {

MpirunBackend::MpirunBackend(MpirunOptions options) : LauncherBackend("mpirun"), options_(std::move(options)) {}

std::optional<Result<Inventory>> MpirunBackend::own_hosts() {
  if (!options_.pod_slots) {
    return std::nullopt;
  }
  return kubernetes::kubernetes_inventory(options_.kubernetes, *options_.pod_slots, options_.pod_labels);
}

Inventory MpirunBackend::resolve_addresses(Inventory hosts) {
  // Pods keep their names: kubectl, not ssh, reaches them.
  if (options_.rsh_transport != "ssh") {
    return hosts;
  }
  return ssh_resolve_addresses(options_.ssh, std::move(hosts));
}

Result<Inventory> MpirunBackend::probe_gpus(Inventory hosts) {
  return ssh_probe_gpu_slots(options_.ssh, std::move(hosts));
}

std::vector<HostCheck> MpirunBackend::check(const Inventory& hosts) {
  return ssh_check_hosts(options_.ssh, remote_ddl_path(options_.ssh), hosts);
}

std::optional<Result<int>> MpirunBackend::master_port(const Host& host, int first, int count) {
  if (net::is_this_machine(host.address)) {
    return net::free_ports_here(first, count);
  }
  if (options_.rsh_transport == "ssh") {
    return ssh_master_port(options_.ssh, host, first, count);
  }
  return std::nullopt;
}

MpirunBackend::~MpirunBackend() { shutdown(); }

Result<void> MpirunBackend::find_launcher(const Plan& plan) {
  auto version = run_captured({"mpirun", "--version"}, 30'000);
  if (!version || version->exit.code != 0) {
    return fail(ExitCode::launch,
                "backend mpirun needs Open MPI's mpirun on PATH (Debian: apt-get install openmpi-bin)");
  }
  if (!version->out.starts_with("mpirun (Open MPI)")) {
    return fail(ExitCode::launch, fmt::format("backend mpirun needs Open MPI; found: {}",
                                              last_lines(version->out, 1)));
  }
  auto path = gang_file("hostfile", openmpi_hostfile(plan), false);
  if (!path) {
    return fail(path.error());
  }
  hostfile_ = *path;
  return {};
}

Result<LauncherCommand> MpirunBackend::command(std::span<const RankLaunch> launches, bool dry_run) {
  MpirunSettings settings;
  settings.hostfile = dry_run ? "<hostfile>" : hostfile_;
  settings.ddl_path = own_executable_path();
  settings.workdir = launcher_workdir(launches);
  settings.as_root = ::geteuid() == 0;
  settings.rsh_transport = options_.rsh_transport;
  settings.job_file = options_.job_file;
  settings.extra_args = options_.args;
  return build_mpirun_command(launches, settings);
}

std::unique_ptr<LauncherOutput> MpirunBackend::parse_output(int /*world_size*/, LauncherOutput::Sink sink) {
  return std::make_unique<TaggedOutput>(std::move(sink));
}

void MpirunBackend::deliver(int signo) {
  kill_launcher(signo == SIGKILL ? SIGTERM : signo == SIGSTOP ? SIGTSTP : signo);
}

} // namespace ddl::mpirun
