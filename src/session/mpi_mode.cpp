// SPDX-License-Identifier: MIT
#include "src/session/mpi_mode.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "backends/registry.hpp"
#include "src/plan/pmix_hosts.hpp"
#include "src/render/frameworks/mpi.hpp"
#include "src/pmix/server.hpp"
#include "src/util/duration.hpp"
#include "src/util/net.hpp"
#include "src/util/rank_tag.hpp"

namespace ddl::session {

namespace {

std::string counts_text(const std::vector<int>& counts) { return fmt::format("{}", fmt::join(counts, ",")); }

// Each host's worker, then the job's own command.
std::vector<std::string> worker_command(const JobSpec& job, const Backend& backend, const PmixHosts& hosts) {
  std::vector<std::string> command{backend.ddl_path(), "worker", "pmix-host", "--host-ranks",
                                   counts_text(hosts.ranks), "--grace", format_duration(job.grace),
                                   "--rank-prefix", "--lines", std::to_string(rank_tag::k_version), "--"};
  if (job.command_is_shell) {
    command.insert(command.end(), {"/bin/sh", "-c", job.command.front()});
  } else {
    command.insert(command.end(), job.command.begin(), job.command.end());
  }
  return command;
}

// Why mpi.launch auto cannot be pmix for `job` ("" when it can).
std::string pmix_unproven(const JobSpec& job) {
  auto program = mpi_program(job);
  if (!program) {
    return "no MPI program found (its ELF names no MPI library)";
  }
  if (!is_open_mpi_library(program->library)) {
    return fmt::format("{} links {}, not Open MPI's libmpi.so.40", program->path, program->library);
  }
  if (std::string why; !pmix::server_available(&why)) {
    return why;
  }
  return pmix_auto_backend_problem(job);
}

} // namespace

MpiChoice resolve_mpi_launch(const JobSpec& job) {
  if (job.mpi.launch != MpiLaunch::automatic) {
    return MpiChoice{job.mpi.launch, ""};
  }
  std::string unproven = pmix_unproven(job);
  if (unproven.empty()) {
    auto program = mpi_program(job);
    return MpiChoice{MpiLaunch::pmix, fmt::format("mpi.launch auto: pmix, as {} links Open MPI's {} and OpenPMIx "
                                                  "is installed", program->path, program->library)};
  }
  return MpiChoice{MpiLaunch::mpirun, "mpi.launch auto: mpirun, as " + unproven};
}

JobSpec with_mpi_choice(const JobSpec& job, const MpiChoice& choice) {
  if (!choice.why.empty()) {
    spdlog::info("{}", choice.why);
  }
  JobSpec resolved = job;
  resolved.mpi.launch = choice.launch;
  return resolved;
}

Result<PlannedJob> plan_mpi_job(const JobSpec& job, JobSpec& resolved) {
  const MpiChoice choice = resolve_mpi_launch(job);
  resolved = with_mpi_choice(job, choice);
  auto planned = plan_job(resolved);
  if (planned && !choice.why.empty()) {
    planned->backend_why += (planned->backend_why.empty() ? "" : "; ") + choice.why;
  }
  return planned;
}

Result<PmixLaunch> adopt_pmix_launch(const JobSpec& job, const PlannedJob& planned) {
  const Backend& backend = *planned.backend;
  if (job.mpi.launch != MpiLaunch::pmix || backend.serves_pmix()) {
    return PmixLaunch{false, {}, {}, {}};
  }
  if (job.launch.np.elastic()) {
    return fail(ExitCode::usage, "launch.min_np: elastic restarts are not available with mpi.launch \"pmix\" "
                                 "(--mpi pmix); give a plain np");
  }
  if (std::string why; backend.ranks_are_local() && !pmix::server_available(&why)) {
    return fail(ExitCode::usage, "--mpi pmix: ddl cannot host a PMIx server on this machine: " + why);
  }
  auto hosts = pmix_hosts(planned.plan);
  if (!hosts) {
    return fail(hosts.error());
  }
  std::vector<std::string> command = worker_command(job, backend, *hosts);
  PmixLaunch launch{true, std::move(hosts->ranks), job, std::move(hosts->plan)};
  launch.job.command = std::move(command);
  launch.job.command_is_shell = false;
  launch.job.frameworks.clear();
  return launch;
}

pmix::WorldView pmix_world_view(const JobSpec& job, const Plan& gang, const PmixLaunch& launch) {
  pmix::WorldView world;
  world.layout.nspace = pmix::job_namespace(job.name, "0");
  const std::string me = net::own_hostname();
  for (std::size_t host = 0; host < gang.hosts.size(); ++host) {
    const std::string& name = gang.hosts[host].name;
    world.plan_hosts.push_back(name);
    world.layout.hosts.push_back({net::is_this_machine(name) && !me.empty() ? me : name,
                                  launch.host_ranks.at(host)});
  }
  pmix::make_host_names_unique(world.layout.hosts);
  return world;
}

} // namespace ddl::session
