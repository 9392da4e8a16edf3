// SPDX-License-Identifier: MIT
#include "cmd/pipeline.hpp"

#include "backends/registry.hpp"
#include "rendezvous/launcher.hpp"
#include "rendezvous/protocol.hpp"
#include "src/launch/supervisor.hpp"
#include "src/render/launches.hpp"
#include "src/util/net.hpp"
#include "src/util/signals.hpp"

extern char** environ;

namespace ddl::cmd {

namespace {

// torch.master_port as launched: the job's, or a free port when it is 0.
Result<int> launch_master_port(const JobSpec& job) {
  if (job.torch.master_port != 0) {
    return job.torch.master_port;
  }
  return net::free_port_pair("127.0.0.1", rendezvous::k_net_wording);
}

} // namespace

Result<Inventory> job_hosts(const JobSpec& job, Backend& backend) {
  if (auto own = backend.own_hosts()) {
    return std::move(*own);
  }
  return discover_hosts(job);
}

Result<PlannedJob> plan_job(const JobSpec& job) {
  PlannedJob planned{make_backend(job), {}};
  auto hosts = job_hosts(job, *planned.backend);
  if (!hosts) {
    return fail(hosts.error());
  }
  hosts = planned.backend->resolve_addresses(std::move(*hosts));
  if (job.hosts.slots_from_gpus) {
    hosts = planned.backend->probe_gpus(std::move(*hosts));
    if (!hosts) {
      return fail(hosts.error());
    }
  }
  auto plan = make_plan(job, *hosts);
  if (!plan) {
    return fail(plan.error());
  }
  planned.plan = std::move(*plan);
  if (stop::requested()) {
    return fail(stop::error("planning the job"));
  }
  return planned;
}

RankPlace rank_place(const Backend& backend) {
  return backend.ranks_are_local() ? RankPlace::this_machine : RankPlace::remote;
}

Result<int> launch_job(const JobSpec& job, PlannedJob& planned, const LaunchOptions& options,
                       const AfterRanks& after_ranks) {
  Backend& backend = *planned.backend;
  const Plan& plan = planned.plan;
  LaunchContext ctx;
  auto master_port = launch_master_port(job);
  if (!master_port) {
    return fail(master_port.error());
  }
  ctx.master_port = *master_port;
  // Before any rank: its address and a fresh token go into every rank's env.
  auto rendezvous = rendezvous::JobRendezvous::start(job, plan, backend.ranks_are_local());
  if (!rendezvous) {
    return fail(rendezvous.error());
  }
  ctx.rendezvous = (*rendezvous)->endpoint();
  ctx.token = (*rendezvous)->token();
  SupervisorOptions supervisor;
  supervisor.timeout = job.timeout;
  supervisor.deadline = stop::deadline();
  supervisor.max_restarts = options.max_restarts;
  supervisor.grace = job.grace;
  supervisor.output = options.output;
  supervisor.watchdog = [&] { return (*rendezvous)->overdue(); };
  const RankPlace place = rank_place(backend);
  auto build = [&](int attempt) -> Result<std::vector<RankLaunch>> {
    (*rendezvous)->begin_attempt(attempt);
    LaunchContext attempt_ctx = ctx;
    attempt_ctx.attempt = attempt;
    return build_launches(job, plan, attempt_ctx, place, environ);
  };
  auto code = supervise(backend, plan, build, supervisor);
  backend.shutdown();
  if (after_ranks) {
    after_ranks((*rendezvous)->server());
  }
  return code;
}

} // namespace ddl::cmd
