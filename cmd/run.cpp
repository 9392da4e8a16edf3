// SPDX-License-Identifier: MIT
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cmd/run.hpp"

#include "cmd/command.hpp"
#include "cmd/pipeline.hpp"
#include "src/render/launches.hpp"
#include "src/render/render.hpp"
#include "src/util/line_prefix.hpp"
#include "src/util/phase_timer.hpp"

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

// The line prefix: --prefix or job.prefix, else torchrun's
// TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE from ddl's environment, else "[{rank}] ".
LinePrefix line_prefix_for(const JobSpec& job) {
  std::string problem;
  if (!job.prefix.empty()) {
    return LinePrefix::parse(job.prefix, problem).value_or(LinePrefix::standard());  // checked at load
  }
  if (const char* torch = std::getenv("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"); torch != nullptr && *torch != 0) {
    return LinePrefix::parse(from_torch_template(torch), problem).value_or(LinePrefix::standard());
  }
  return LinePrefix::standard();
}

// How rank output is shown and logged; the rules that need the plan.
Result<OutputOptions> output_options(const JobSpec& job, const Plan& plan, bool json) {
  if (job.output_ranks.highest() >= plan.world_size) {
    return fail(ExitCode::usage, fmt::format("--output-ranks: rank {} is not in this job of {} rank{} (0-{})",
                                             job.output_ranks.highest(), plan.world_size,
                                             plan.world_size == 1 ? "" : "s", plan.world_size - 1));
  }
  if (job.fold && json) {
    return fail(ExitCode::usage, "--fold: does not go with --json (output events are per line)");
  }
  OutputOptions output;
  output.json = json;
  output.log_dir = job.log_dir;
  output.strict_logs = job.strict_logs;
  output.split_logs = job.split_logs;
  output.prefix = line_prefix_for(job);
  output.timestamps = job.timestamps;
  output.output_ranks = job.output_ranks;
  output.fold = job.fold;
  return output;
}

Result<int> run_job(const RunOptions& opts) {
  PhaseTimer reading("read job");
  auto job = load_job_for(opts.common, JobClock::starts);
  reading.end();
  if (!job) {
    return fail(job.error());
  }
  if (auto has_command = require_command(*job); !has_command) {
    return fail(has_command.error());
  }
  return run_loaded_job(*job, opts.dry_run, opts.common.json);
}

} // namespace

Result<int> run_loaded_job(JobSpec& job, bool dry_run, bool json, const AfterPlan& after_plan) {
  auto planned = plan_job(job);
  if (!planned) {
    return fail(planned.error());
  }
  if (after_plan) {
    if (auto checked = after_plan(job, *planned); !checked) {
      return fail(checked.error());
    }
  }
  if (dry_run) {
    return print_dry_run(job, *planned, json);
  }
  auto output = output_options(job, planned->plan, json);
  if (!output) {
    return fail(output.error());
  }
  LaunchOptions launch;
  launch.output = std::move(*output);
  launch.max_restarts = job.max_restarts;
  return launch_job(job, *planned, launch);
}

void add_run(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Launch the job and supervise its ranks as a gang");
  add_common_options(*sub, opts->common);
  sub->add_flag("--dry-run", opts->dry_run, "Print the plan (hosts, ranks, env, command); launch nothing");
  sub->add_option("--name", opts->common.overrides.name,
                  "The job's name (ddl ps, DDL_JOB, TORCHELASTIC_RUN_ID); default: the job file's stem");
  sub->add_option("--timeout", opts->common.overrides.timeout, "End the whole job after DUR (e.g. 30s, 2h); exit 124");
  sub->add_option("--max-restarts", opts->common.overrides.max_restarts,
                  "Restart the whole gang up to N times after a failure");
  sub->add_option("--log-dir", opts->common.overrides.log_dir, "Also write DIR/rank-R.attempt-A.log per rank");
  sub->add_flag("--strict-logs", opts->common.overrides.strict_logs,
                "Exit 3 when a rank log cannot be written (a full disk); else a warning");
  sub->add_option("--output-ranks", opts->common.overrides.output_ranks,
                  "Show only these ranks' output, e.g. 0,3-4 (the others go only to --log-dir)");
  sub->add_option("--prefix", opts->common.overrides.prefix,
                  "Prefix of each rank line: {rank} {host} {local_rank} {attempt} {partial}; default \"[{rank}{partial}] \"");
  sub->add_flag("--timestamps", opts->common.overrides.timestamps, "Print a UTC time before each rank line");
  sub->add_flag("--split-logs", opts->common.overrides.split_logs,
                "With --log-dir: stdout and stderr in separate files (rank-R.attempt-A.stdout.log, .stderr.log)");
  sub->add_flag("--fold", opts->common.overrides.fold,
                "Print each rank's whole output once at the end, identical ones together (like dshbak -c)");
  sub->add_option("-x,--env", opts->common.overrides.env, "Set K=V for every rank (repeatable)")
      ->allow_extra_args(false);
  sub->footer("The options end at the first word that is none of run's, nor the JOB file (a .toml, or any file "
              "that is not executable): that word is the program, the rest its arguments (replacing job.command); "
              "-- also ends them.\n\n"
              "Examples:\n  ddl run --np 4 python3 -u train.py --epochs 3\n"
              "  ddl run -H 'node[1-2]:8' --name resnet job.toml\n  ddl run job.toml --dry-run");
  sub->callback([&selected, opts] {
    selected = [opts] {
      auto code = run_job(*opts);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
