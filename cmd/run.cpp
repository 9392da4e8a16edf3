// SPDX-License-Identifier: MIT
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "cmd/pipeline.hpp"
#include "src/render/launches.hpp"
#include "src/render/render.hpp"

extern char** environ;

namespace ddl::cmd {

namespace {

struct RunOptions {
  CommonOptions common;
  bool dry_run = false;
};

// --dry-run: the plan table, the interface per host and why, then what the
// backend adds (mpirun's command); with --json the plan as `render --format
// json` prints it.
int print_dry_run(const JobSpec& job, const PlannedJob& planned, bool json) {
  LaunchContext ctx = preview_context(job, planned);
  auto interfaces = job_interfaces(job, *planned.backend, planned.plan);
  if (!interfaces) {
    return report(interfaces.error());
  }
  ctx.interfaces = std::move(*interfaces);
  if (json) {
    std::fputs(plan_json(job, planned.plan, ctx).c_str(), stdout);
    return 0;
  }
  write_plan_table(job, planned.plan, ctx, write_stdout);
  std::fputs(interfaces_text(planned.plan, ctx.interfaces, rank0_address(planned.plan)).c_str(), stdout);
  auto launches = build_launches(job, planned.plan, ctx, rank_place(*planned.backend), environ);
  std::fputs(planned.backend->dry_run_text(launches).c_str(), stdout);
  return 0;
}

Result<int> run_job(const RunOptions& opts) {
  auto job = load_job_for(opts.common, JobClock::starts);
  if (!job) {
    return fail(job.error());
  }
  if (auto has_command = require_command(*job); !has_command) {
    return fail(has_command.error());
  }
  auto planned = plan_job(*job);
  if (!planned) {
    return fail(planned.error());
  }
  if (opts.dry_run) {
    return print_dry_run(*job, *planned, opts.common.json);
  }
  LaunchOptions launch;
  launch.output.json = opts.common.json;
  launch.output.log_dir = job->log_dir;
  launch.output.strict_logs = job->strict_logs;
  launch.max_restarts = job->max_restarts;
  return launch_job(*job, *planned, launch);
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
  sub->add_flag("--strict-logs", opts->common.overrides.strict_logs,
                "Exit 3 when a rank log cannot be written (a full disk); else a warning");
  sub->add_option("-x,--env", opts->common.overrides.env, "Set K=V for every rank (repeatable)")
      ->allow_extra_args(false);
  sub->footer("Everything after -- is the command (replaces job.command).");
  sub->callback([&selected, opts] {
    selected = [opts] {
      auto code = run_job(*opts);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
