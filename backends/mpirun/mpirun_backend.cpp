// SPDX-License-Identifier: MIT
#include "backends/mpirun/mpirun_backend.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/util/run_captured.hpp"
#include "backends/kubernetes/kubectl.hpp"
#include "backends/mpirun/mpirun_command.hpp"
#include "backends/mpirun/mpirun_output.hpp"
#include "backends/stack_dump.hpp"
#include "src/render/render_files.hpp"
#include "src/util/env.hpp"
#include "src/util/net.hpp"
#include "src/util/process.hpp"
#include "src/util/text.hpp"

namespace ddl::mpirun {

namespace {

// The ssh config for `ddl rsh`, which mpirun runs in its own folder: a
// relative path made absolute ("none" and "~/..." stay as they are).
std::string rsh_ssh_config(const std::string& config) {
  if (config.empty() || config == "none" || config.starts_with('/') || config.starts_with('~')) {
    return config;
  }
  std::error_code error;
  auto absolute = std::filesystem::absolute(config, error);
  return error ? config : absolute.string();
}

} // namespace

MpirunBackend::MpirunBackend(MpirunOptions options)
    : LauncherBackend("mpirun"), options_(std::move(options)),
      access_(make_host_access(options_.rsh_transport, options_.ssh, options_.kubernetes)) {}

std::optional<Result<Inventory>> MpirunBackend::own_hosts() {
  if (!options_.pod_slots) {
    return std::nullopt;
  }
  return kubernetes::kubernetes_inventory(options_.kubernetes, *options_.pod_slots, options_.pod_labels);
}

// As the rsh agent reaches them: pods keep their names (kubectl reaches
// them), an ssh alias gets its HostName.
Inventory MpirunBackend::resolve_addresses(Inventory hosts) { return access_->resolve_addresses(std::move(hosts)); }

Result<Inventory> MpirunBackend::probe_gpus(Inventory hosts) { return access_->probe_gpus(std::move(hosts)); }

std::vector<HostCheck> MpirunBackend::check(const Inventory& hosts) {
  auto checks = access_->check(hosts);
  return checks ? std::move(*checks) : Backend::check(hosts);
}

std::optional<Result<int>> MpirunBackend::master_port(const Host& host, int first, int count) {
  if (net::is_this_machine(host.address)) {
    return net::free_ports_here(first, count);
  }
  return access_->master_port(host, first, count);
}

MpirunBackend::~MpirunBackend() { shutdown(); }

std::optional<MpiFlavour> flavour_of_version(std::string_view version_text) {
  if (version_text.starts_with("mpirun (Open MPI)")) {
    return MpiFlavour::openmpi;
  }
  if (version_text.find("HYDRA build details") != std::string_view::npos) {
    return MpiFlavour::mpich;
  }
  return std::nullopt;
}

// The launcher's program and its flavour: `mpirun` as found (auto), or the
// one the job names (mpich: mpiexec.hydra when `mpirun` is another MPI's).
Result<void> MpirunBackend::find_flavour() {
  const MpiFlavour wanted = options_.flavour;
  std::vector<std::string> programs = {"mpirun"};
  if (wanted == MpiFlavour::mpich) {
    programs.push_back("mpiexec.hydra");
  }
  std::string found_text;
  for (const std::string& program : programs) {
    auto version = run_captured({program, "--version"}, Millis{30'000});
    if (!version || !version->succeeded()) {
      continue;
    }
    auto flavour = flavour_of_version(version->out);
    if (flavour && (wanted == MpiFlavour::automatic || *flavour == wanted)) {
      flavour_ = *flavour;
      program_ = program;
      return {};
    }
    found_text = last_lines(version->out, 1);
  }
  if (found_text.empty()) {
    return fail(ExitCode::launch, wanted == MpiFlavour::mpich
                                      ? "mpirun.flavour mpich needs MPICH's mpiexec.hydra on PATH (Debian: apt-get "
                                        "install mpich)"
                                      : "backend mpirun needs Open MPI's mpirun (or MPICH's) on PATH (Debian: "
                                        "apt-get install openmpi-bin)");
  }
  return fail(ExitCode::launch, fmt::format("backend mpirun needs {}; found: {}",
                                            wanted == MpiFlavour::mpich     ? "MPICH's Hydra (mpirun.flavour mpich)"
                                            : wanted == MpiFlavour::openmpi ? "Open MPI (mpirun.flavour openmpi)"
                                                                            : "Open MPI or MPICH",
                                            found_text));
}

Result<void> MpirunBackend::find_launcher(const Plan& plan) {
  if (auto found = find_flavour(); !found) {
    return found;
  }
  const bool mpich = flavour_ == MpiFlavour::mpich;
  auto path = gang_file("hostfile", mpich ? mpich_hostfile(plan) : openmpi_hostfile(plan), false);
  if (!path) {
    return fail(path.error());
  }
  hostfile_ = *path;
  if (mpich) {
    rsh_exec_ = (std::filesystem::path(hostfile_).parent_path() / "rsh").string();
    std::ofstream out(rsh_exec_);
    out << hydra_rsh_script(own_executable_path());
    out.close();
    if (!out || ::chmod(rsh_exec_.c_str(), 0700) != 0) {
      return fail(ExitCode::launch, "cannot write " + rsh_exec_);
    }
  }
  return {};
}

Result<LauncherCommand> MpirunBackend::command(std::span<const RankLaunch> launches, bool dry_run) {
  MpirunSettings settings;
  settings.hostfile = dry_run ? "<hostfile>" : hostfile_;
  settings.ddl_path = own_executable_path();
  settings.workdir = launcher_workdir(launches);
  settings.as_root = ::geteuid() == 0;
  settings.rsh_transport = std::string(transport_word(options_.rsh_transport));
  settings.job_file = options_.job_file;
  settings.ssh_config = rsh_ssh_config(options_.ssh.config);
  settings.extra_args = options_.args;
  // --dry-run prepares nothing: the flavour is asked here (the job's, when
  // no such MPI is installed).
  if (dry_run && !find_flavour()) {
    flavour_ = options_.flavour == MpiFlavour::mpich ? MpiFlavour::mpich : MpiFlavour::openmpi;
    program_ = flavour_ == MpiFlavour::mpich ? "mpiexec.hydra" : "mpirun";
  }
  settings.mpirun = program_;
  settings.flavour = flavour_;
  settings.rsh_exec = dry_run ? "<rsh>" : rsh_exec_;
  const std::string rendezvous = launches.empty() ? "" : env_value(launches.front().env, "DDL_RENDEZVOUS");
  if (auto endpoint = net::parse_endpoint(rendezvous)) {
    settings.launcher_address = endpoint->host;
  }
  settings.as_root = settings.as_root && flavour_ == MpiFlavour::openmpi;
  return build_mpirun_command(launches, settings);
}

std::unique_ptr<LauncherOutput> MpirunBackend::parse_output(int /*world_size*/, LauncherOutput::Sink sink) {
  return std::make_unique<TaggedOutput>(std::move(sink),
                                        flavour_ == MpiFlavour::mpich ? TagStyle::hydra : TagStyle::open_mpi);
}

std::optional<std::vector<std::string>> MpirunBackend::dump_command(const RankLaunch& launch, DumpTool tool,
                                                                    Millis timeout) {
  const std::string rendezvous = env_value(launch.env, "DDL_RENDEZVOUS");
  if (rendezvous.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> args = {std::to_string(launch.rank), std::string(dump_tool_name(tool)),
                                   std::to_string(dump_seconds(timeout)), rendezvous};
  if (net::is_this_machine(launch.host.address)) {
    std::vector<std::string> argv = {"sh", "-c", std::string(stack_dump_script()), "sh"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // `ddl rsh HOST WORDS...` runs WORDS joined by blanks under the remote sh.
  std::vector<std::string> argv = {"env",
                                   "DDL_RSH_TRANSPORT=" + std::string(transport_word(options_.rsh_transport)),
                                   "DDL_RSH_JOB=" + options_.job_file,
                                   "DDL_RSH_SSH_CONFIG=" + rsh_ssh_config(options_.ssh.config),
                                   own_executable_path(),
                                   "rsh",
                                   launch.host.name,
                                   "sh",
                                   "-c",
                                   shell_quote(stack_dump_script()),
                                   "sh"};
  for (const std::string& arg : args) {
    argv.push_back(shell_quote(arg));
  }
  return argv;
}

void MpirunBackend::deliver(int signo) {
  kill_launcher(signo == SIGKILL ? SIGTERM : signo == SIGSTOP ? SIGTSTP : signo);
}

} // namespace ddl::mpirun
