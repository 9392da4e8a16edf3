// SPDX-License-Identifier: MIT
#include "cmd/pipeline.hpp"

#include "backends/registry.hpp"
#include "rendezvous/launcher.hpp"
#include "rendezvous/protocol.hpp"
#include "src/launch/supervisor.hpp"
#include "src/render/launches.hpp"
#include "src/util/net.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

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

// Hosts that the launcher reaches at a loopback address are this machine
// (a name that Debian maps to 127.0.1.1, "localhost"): when some host is
// remote, they get the address this machine has toward the first remote one,
// which remote ranks can reach (MASTER_ADDR, TF_CONFIG, hostfiles).
Inventory routable_addresses(Inventory hosts, bool ranks_are_local) {
  if (ranks_are_local) {
    return hosts;
  }
  auto remote = std::ranges::find_if(hosts, [](const Host& host) { return !net::is_loopback(host.address); });
  if (remote == hosts.end()) {
    return hosts;
  }
  net::Route route = net::route_to(remote->address);
  if (route.end != net::RouteEnd::found) {
    return hosts;
  }
  for (Host& host : hosts) {
    if (net::is_loopback(host.address)) {
      spdlog::info("{}: address {} is this machine's loopback; remote ranks reach it at {}", host.name,
                   host.address, route.address);
      host.address = route.address;
    }
  }
  return hosts;
}

bool user_sets(const JobSpec& job, const EnvList& passed, std::string_view name) {
  auto named = [&](const auto& kv) { return kv.first == name; };
  return std::ranges::any_of(job.env, named) || std::ranges::any_of(passed, named);
}

} // namespace

std::string rank0_address(const Plan& plan) {
  return plan.hosts.at(plan.ranks.empty() ? 0 : plan.ranks.front().host_index).address;
}

std::vector<HostInterface> job_interfaces(const JobSpec& job, Backend& backend, const Plan& plan) {
  const EnvList passed = passed_env(job, environ);
  if (std::ranges::all_of(k_interface_variables, [&](std::string_view name) { return user_sets(job, passed, name); })) {
    return {};
  }
  const std::string target = rank0_address(plan);
  auto found = backend.find_interfaces(plan.hosts, target);
  for (std::size_t h = 0; h < found.size() && h < plan.hosts.size(); ++h) {
    if (found[h].name.empty() && !found[h].unreachable) {
      spdlog::warn("{}: no interface toward rank 0 ({}): {}; GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME and "
                   "HOROVOD_GLOO_IFACE are not set there",
                   plan.hosts[h].name, target, found[h].why);
    }
  }
  return found;
}

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
  hosts = routable_addresses(planned.backend->resolve_addresses(std::move(*hosts)),
                             planned.backend->ranks_are_local());
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
  return planned;
}

bool uses_horovod_gloo(const JobSpec& job, const Backend& backend) {
  return std::ranges::find(job.frameworks, Framework::horovod) != job.frameworks.end() &&
         !backend.starts_mpi_world();
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
  ctx.interfaces = job_interfaces(job, backend, plan);
  // Before any rank: its address and a fresh token go into every rank's env.
  ctx.horovod_gloo = uses_horovod_gloo(job, backend);
  auto rendezvous = rendezvous::JobRendezvous::start(job, plan, backend.ranks_are_local(), ctx.horovod_gloo);
  if (!rendezvous) {
    return fail(rendezvous.error());
  }
  ctx.rendezvous = (*rendezvous)->endpoint();
  ctx.token = (*rendezvous)->token();
  ctx.horovod_address = (*rendezvous)->horovod_address();
  ctx.horovod_port = std::to_string((*rendezvous)->horovod_port());
  SupervisorOptions supervisor;
  supervisor.timeout = job.timeout;
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
