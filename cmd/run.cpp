// SPDX-License-Identifier: MIT
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "backends/registry.hpp"
#include "backends/mpirun/mpirun_command.hpp"
#include "cmd/command.hpp"
#include "rendezvous/launcher.hpp"
#include "src/inventory/inventory.hpp"
#include "src/render/launches.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render.hpp"
#include "src/launch/supervisor.hpp"

extern char** environ;

namespace ddl::cmd {

namespace {

struct RunOptions {
  CommonOptions common;
  bool dry_run = false;
};

Result<int> run_job(const RunOptions& opts) {
  auto job = load_job_for(opts.common);
  if (!job) {
    return fail(job.error());
  }
  if (auto has_command = require_command(*job); !has_command) {
    return fail(has_command.error());
  }
  auto plan = plan_for(*job);
  if (!plan) {
    return fail(plan.error());
  }
  LaunchContext ctx;
  ctx.master_port = job->torch.master_port;
  if (opts.dry_run) {
    std::fputs(plan_table(*job, *plan, ctx).c_str(), stdout);
    if (job->launch.backend == BackendKind::mpirun) {
      std::fputs(mpirun::dry_run_text(*job, build_launches(*job, *plan, ctx, {}, environ)).c_str(), stdout);
    }
    return 0;
  }

  auto master_port = launch_master_port(*job);
  if (!master_port) {
    return fail(master_port.error());
  }
  ctx.master_port = *master_port;
  // Before any rank: its address and a fresh token go into every rank's env.
  auto rendezvous = rendezvous::JobRendezvous::start(*job, *plan);
  if (!rendezvous) {
    return fail(rendezvous.error());
  }
  ctx.rendezvous = (*rendezvous)->endpoint();
  ctx.token = (*rendezvous)->token();
  std::unique_ptr<Backend> backend = make_backend(*job);
  // Local ranks start from this machine's login variables; remote backends
  // get theirs from the remote login.
  EnvList base = job->launch.backend == BackendKind::local ? local_login_env(environ) : EnvList{};
  SupervisorOptions options;
  options.timeout = job->timeout;
  options.max_restarts = job->max_restarts;
  options.grace = job->grace;
  options.output.json = opts.common.json;
  options.output.log_dir = job->log_dir;
  options.watchdog = [&] { return (*rendezvous)->overdue(); };
  auto build = [&](int attempt) -> Result<std::vector<RankLaunch>> {
    (*rendezvous)->begin_attempt(attempt);
    LaunchContext attempt_ctx = ctx;
    attempt_ctx.attempt = attempt;
    return build_launches(*job, *plan, attempt_ctx, base, environ);
  };
  auto code = supervise(*backend, *plan, build, options);
  backend->shutdown();
  return code;
}

} // namespace

void add_run(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Launch the job and supervise its ranks as a gang");
  add_common_options(*sub, opts->common);
  sub->add_flag("--dry-run", opts->dry_run, "Print the plan (hosts, ranks, env, command); launch nothing");
  sub->add_option("--timeout", opts->common.overrides.timeout, "End the whole job after DUR (e.g. 30s, 2h); exit 124");
  sub->add_option("--max-restarts", opts->common.overrides.max_restarts,
                  "Restart the whole gang up to N times after a failure");
  sub->add_option("--log-dir", opts->common.overrides.log_dir, "Also write DIR/rank-R.attempt-A.log per rank");
  sub->add_option("-x,--env", opts->common.overrides.env, "Set K=V for every rank (repeatable)");
  sub->footer("Everything after -- is the command (replaces job.command).");
  sub->callback([&selected, opts] {
    selected = [opts] {
      auto code = run_job(*opts);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
