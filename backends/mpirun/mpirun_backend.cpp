// SPDX-License-Identifier: MIT
#include "backends/mpirun/mpirun_backend.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/child_process.hpp"
#include "src/util/process.hpp"
#include "backends/mpirun/mpirun_command.hpp"
#include "backends/mpirun/mpirun_output.hpp"
#include "backends/kubernetes/kubectl.hpp"
#include "backends/ssh/ssh_probe.hpp"
#include "src/render/render_files.hpp"
#include "src/util/net.hpp"
#include "src/util/file.hpp"
#include "src/util/text.hpp"

namespace ddl::mpirun {

namespace {

constexpr auto k_shutdown_wait = std::chrono::seconds(10);

} // namespace

MpirunBackend::MpirunBackend(MpirunOptions options) : options_(std::move(options)) {}

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

std::string MpirunBackend::dry_run_text(std::span<const RankLaunch> launches) const {
  return mpirun::dry_run_text(launches, options_.rsh_transport);
}

MpirunBackend::~MpirunBackend() {
  shutdown();
  if (!hostfile_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(hostfile_dir_, ec);
  }
}

Result<void> MpirunBackend::prepare(const Plan& plan, std::span<const RankLaunch> /*launches*/) {
  auto version = run_captured({"mpirun", "--version"}, 30'000);
  if (!version || version->exit.code != 0) {
    return fail(ExitCode::launch,
                "backend mpirun needs Open MPI's mpirun on PATH (Debian: apt-get install openmpi-bin)");
  }
  if (!version->out.starts_with("mpirun (Open MPI)")) {
    return fail(ExitCode::launch, fmt::format("backend mpirun needs Open MPI; found: {}",
                                              last_lines(version->out, 1)));
  }
  auto path = write_private_file("ddl-mpirun", "hostfile", openmpi_hostfile(plan), hostfile_dir_);
  if (!path) {
    return fail(path.error());
  }
  hostfile_ = *path;
  world_size_ = plan.world_size;
  std::lock_guard lock(gang_.mutex);
  launches_.clear();
  gang_.done = false;
  return {};
}

Result<void> MpirunBackend::start(const RankLaunch& launch, RankEvents& events) {
  std::lock_guard lock(gang_.mutex);
  if (hostfile_.empty()) {
    return fail(ExitCode::launch, "mpirun backend: start before prepare");
  }
  launches_.push_back(launch);
  if (static_cast<int>(launches_.size()) < world_size_) {
    return {};
  }
  std::sort(launches_.begin(), launches_.end(),
            [](const RankLaunch& a, const RankLaunch& b) { return a.rank < b.rank; });
  MpirunSettings settings;
  settings.hostfile = hostfile_;
  settings.ddl_path = own_executable_path();
  settings.workdir = mpirun_workdir(launches_);
  settings.as_root = ::geteuid() == 0;
  settings.rsh_transport = options_.rsh_transport;
  settings.job_file = options_.job_file;
  auto command = build_mpirun_command(launches_, settings);
  if (!command) {
    return fail(command.error());
  }
  spdlog::info("mpirun: {}", fmt::join(command->argv.begin(), command->argv.begin() + 6, " "));
  if (gang_.runner.joinable()) {
    gang_.runner.join();
  }
  gang_.done = false;
  // mpirun is started from its own thread, which lives as long as mpirun:
  // PR_SET_PDEATHSIG fires when the spawning thread ends. When ddl dies,
  // mpirun gets SIGTERM and must not die of SIGPIPE on our closed pipes
  // before it has ended its ranks.
  gang_.runner = std::thread([this, argv = command->argv, env = command->env, &events]() mutable {
    run_mpirun(std::move(argv), std::move(env), events);
  });
  return {};
}

void MpirunBackend::run_mpirun(std::vector<std::string> argv, EnvList env, RankEvents& events) {
  TaggedOutput output([&](int rank, Stream stream, std::string_view bytes) {
    events.output(rank, stream, bytes);
  });
  auto status = gang_.run(argv, std::move(env), world_size_, events,
                          [&](Stream stream, std::string_view bytes) { output.feed(stream, bytes); });
  if (!status) {
    return;
  }
  output.finish();
  report_exits(*status, output, events);
  gang_.done = true;
}

void MpirunBackend::report_exits(int status, TaggedOutput& output, RankEvents& events) {
  RankExit whole = exit_of_status(status);
  if (!output.mpirun_text().empty()) {
    spdlog::info("mpirun said:\n{}", trim(output.mpirun_text()));
  }
  int failed_rank = -1;
  RankExit failed;
  if (auto marker = output.first_failure()) {
    failed_rank = marker->first;
    failed.code = marker->second;
  } else if (auto signalled = signalled_rank(output.mpirun_text())) {
    failed_rank = signalled->first;
    failed.signal = signalled->second;
    failed.code = 128 + signalled->second;
  } else if (whole.code != 0 && rsh_failure(output.mpirun_text())) {
    report_unstarted_host(*rsh_failure(output.mpirun_text()), events);
    return;
  } else if (whole.code != 0) {
    // mpirun failed on its own (daemons not started, no executable, slots).
    std::string said = last_lines(output.mpirun_text(), 12);
    RankExit launch_failure{whole.code, whole.signal,
                            fmt::format("mpirun failed (exit {}){}", whole.code,
                                        said.empty() ? "" : ":\n" + said)};
    for (int rank = 0; rank < world_size_; ++rank) {
      events.exited(rank, launch_failure);
    }
    return;
  }
  if (failed_rank >= 0 && failed_rank < world_size_) {
    events.exited(failed_rank, failed);
  }
  for (int rank = 0; rank < world_size_; ++rank) {
    if (rank == failed_rank) {
      continue;
    }
    events.exited(rank, failed_rank >= 0 ? RankExit{128 + SIGTERM, SIGTERM, ""} : RankExit{});
  }
}

// A host that `ddl rsh` could not reach (or log in to): its first rank
// failed to start, with the agent's reason; the others were ended with it.
void MpirunBackend::report_unstarted_host(const RshFailure& failure, RankEvents& events) {
  int failed_rank = 0;
  for (const RankLaunch& launch : launches_) {
    if (!failure.host.empty() && (launch.host.address == failure.host || launch.host.name == failure.host)) {
      failed_rank = launch.rank;
      break;
    }
  }
  std::string error = failure.host.empty()
                          ? fmt::format("mpirun's agent (ddl rsh) failed: {}", failure.why)
                          : fmt::format("host {} could not be reached to start Open MPI's daemon there: {}",
                                        failure.host, failure.why);
  events.exited(failed_rank, RankExit{to_int(ExitCode::launch), 0, error});
  for (int rank = 0; rank < world_size_; ++rank) {
    if (rank != failed_rank) {
      events.exited(rank, RankExit{128 + SIGTERM, SIGTERM, ""});
    }
  }
}

void MpirunBackend::signal(int, int signo) {
  std::lock_guard lock(gang_.mutex);
  long pid = gang_.pid;
  if (pid <= 0) {
    return;
  }
  // Every rank is behind the one mpirun: forward each signal once. SIGKILL
  // would orphan mpirun's local ranks; mpirun's own TERM ends them all.
  if (signo == SIGKILL) {
    signo = SIGTERM;
  }
  // SIGSTOP would stop mpirun itself; its SIGTSTP stops the ranks.
  if (signo == SIGSTOP) {
    signo = SIGTSTP;
  }
  if (!gang_.first_in_burst(signo)) {
    return;
  }
  ::kill(static_cast<pid_t>(pid), signo);
}

void MpirunBackend::shutdown() { gang_.end(k_shutdown_wait); }

} // namespace ddl::mpirun
