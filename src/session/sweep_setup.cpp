// SPDX-License-Identifier: MIT
#include "src/session/sweep_setup.hpp"

#include <fmt/core.h>

#include "backends/registry.hpp"
#include "src/launch/plan_hosts.hpp"
#include "src/render/frameworks/torch.hpp"
#include "src/util/process.hpp"

namespace ddl::session {

Result<SweepHosts> sweep_hosts(const JobSpec& job) {
  auto selected = select_backend(job);
  if (!selected) {
    return fail(selected.error());
  }
  if (!selected->backend->takes_host_subsets()) {
    return fail(ExitCode::usage, "ddl sweep: the kubernetes backend cannot place a trial on some of its pods; "
                                 "use ssh over the pods' addresses or run one job per trial");
  }
  auto hosts = hosts_for_plan(job, *selected->backend, std::move(selected->hosts));
  if (!hosts) {
    return fail(hosts.error());
  }
  return SweepHosts{std::string(selected->backend->name()), selected->backend->shares_sweep_broker(),
                    std::move(*hosts)};
}

Result<void> check_fixed_ports(const JobSpec& job, int most_at_once) {
  if (most_at_once < 2) {
    return {};
  }
  std::string problem;
  if (job.rendezvous.port != 0) {
    problem = fmt::format("rendezvous.port = {}", job.rendezvous.port);
  } else if (job.torch.master_port != 0 && master_ports_needed(job) > 0) {
    problem = fmt::format("torch.master_port = {}", job.torch.master_port);
  }
  if (problem.empty()) {
    return {};
  }
  return fail(ExitCode::usage, fmt::format("{}: trials that run at once would share this port; set it to 0 "
                                           "(a free port per trial) or sweep.max_parallel = 1", problem));
}

sweep::SweepConfig make_sweep_config(const sweep::SweepJob& sweep_job, const SweepHosts& hosts,
                                     const std::string& dir, int np, bool progress, bool quiet) {
  const JobSpec& job = sweep_job.job;
  sweep::SweepConfig config;
  config.dir = dir;
  config.ddl = own_executable_path();
  config.job = sweep_job.snapshot;
  config.backend = hosts.backend;
  config.shell = job.command_is_shell;
  config.command = job.command_is_shell ? std::vector<std::string>{"/bin/sh", "-c", job.command.front()} : job.command;
  const SweepSection& spec = *job.sweep;
  config.np = np;
  config.max_parallel = spec.max_parallel;
  config.retries = spec.retries;
  config.metric = spec.metric;
  config.progress = progress;
  config.quiet = quiet;
  return config;
}

} // namespace ddl::session
