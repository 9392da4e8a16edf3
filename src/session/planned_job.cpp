// SPDX-License-Identifier: MIT
#include "src/session/planned_job.hpp"

#include <random>

#include <fmt/core.h>

#include "src/launch/plan_hosts.hpp"
#include "src/render/container.hpp"
#include "src/render/frameworks/horovod.hpp"
#include "src/render/frameworks/torch.hpp"
#include "src/session/verbose.hpp"
#include "src/util/phase_timer.hpp"
#include "src/util/signals.hpp"

namespace ddl::session {

Result<SelectedBackend> select_job_backend(const JobSpec& job) {
  auto selected = select_backend(job);
  if (!selected) {
    return fail(selected.error());
  }
  const Backend& backend = *selected->backend;
  if (auto problem = container_backend_problem(job, backend.container_host(), backend.name())) {
    return fail(ExitCode::usage, *problem);
  }
  return selected;
}

Result<Inventory> find_job_hosts(const JobSpec& job, SelectedBackend& selected) {
  return hosts_for_plan(job, *selected.backend, std::move(selected.hosts));
}

Result<PlannedJob> plan_on_hosts(const JobSpec& job, SelectedBackend selected, Inventory hosts) {
  PlannedJob planned{std::move(selected.backend), std::move(selected.why), {}};
  auto plan = make_plan(job, hosts);
  if (!plan) {
    return fail(plan.error());
  }
  if (auto fits = check_backend_for_plan(job, *planned.backend, *plan); !fits) {
    return fail(fits.error());
  }
  planned.plan = std::move(*plan);
  planned.hosts = std::move(hosts);
  if (stop::requested()) {
    return fail(stop::error("planning the job"));
  }
  log_plan_hosts(planned);
  return planned;
}

Result<PlannedJob> plan_job(const JobSpec& job) {
  PhaseTimer finding("hosts");
  auto selected = select_job_backend(job);
  if (!selected) {
    return fail(selected.error());
  }
  auto hosts = find_job_hosts(job, *selected);
  if (!hosts) {
    return fail(hosts.error());
  }
  finding.end();
  PhaseTimer planning("plan");
  return plan_on_hosts(job, std::move(*selected), std::move(*hosts));
}

bool wants_error_dir(const JobSpec& job, const Backend& backend) {
  return wants_error_files(job, backend.ranks_are_local());
}

LaunchContext preview_context(const JobSpec& job, const PlannedJob& planned) {
  LaunchContext ctx;
  ctx.master_port = job.torch.master_port;
  ctx.backend = backend_shown(planned);
  ctx.horovod_gloo = uses_horovod_gloo(job, planned.backend->starts_mpi_world());
  ctx.container_tag = container_tag();
  ctx.singleton_guard = wants_singleton_guard(job, *planned.backend, planned.plan);
  if (wants_error_dir(job, *planned.backend)) {
    ctx.error_dir = job.log_dir.empty() ? "<error-dir>" : job.log_dir;
  }
  return ctx;
}

bool wants_singleton_guard(const JobSpec& job, const Backend& backend, const Plan& plan) {
  return plan.world_size > 1 && backend.starts_ranks_alone() && job.mpi.launch != MpiLaunch::pmix;
}

std::string backend_shown(const PlannedJob& planned) {
  const std::string name(planned.backend->name());
  return planned.backend_why.empty() ? name : name + " (" + planned.backend_why + ")";
}

std::string container_tag() {
  std::random_device random;
  return fmt::format("{:08x}", random());
}

RankPlace rank_place(const Backend& backend) {
  return backend.ranks_are_local() ? RankPlace::this_machine : RankPlace::remote;
}

} // namespace ddl::session
