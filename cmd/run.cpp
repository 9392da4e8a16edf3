// SPDX-License-Identifier: MIT
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "cmd/run.hpp"

#include "cmd/command.hpp"
#include "cmd/pipeline.hpp"
#include "cmd/pmix_launch.hpp"
#include "src/sweep/metric.hpp"
#include "src/sweep/trial_contract.hpp"
#include "src/util/json.hpp"
#include "src/util/log.hpp"
#include "src/util/rank_logs.hpp"
#include "src/util/signals.hpp"
#include "src/render/launches.hpp"
#include "src/render/render_interfaces.hpp"
#include "src/render/render_plan.hpp"
#include "src/util/line_prefix.hpp"
#include "src/util/phase_timer.hpp"
#include "src/render/binding.hpp"
#include "src/render/container.hpp"
#include "src/render/team_env.hpp"
#include "src/util/text.hpp"
#include "src/util/net_resolve.hpp"

extern char** environ;

namespace ddl::cmd {

namespace {

struct RunOptions {
  CommonOptions common;
  bool dry_run = false;
  std::string trial;  // --trial REQUEST: one attempt of a sweep's trial
};

// What rank 0 runs when [job] setup or [container] wraps the command.
std::string wrapped_text(const JobSpec& job, const std::vector<RankLaunch>& launches) {
  if (launches.empty() || (job.setup.empty() && !job.container.enabled())) {
    return {};
  }
  std::string out = "\n";
  if (!job.setup.empty()) {
    out += "setup (run before the program, in the same shell): " + escape_control(job.setup) + "\n";
  }
  if (job.container.enabled()) {
    out += "container (rank 0; each rank has its own name and GPUs): " + container_text(job, launches.front().argv) + "\n";
  }
  return out;
}

// --dry-run: the plan table, the interface per host and why, the per-host
// env, the CPU binding and the wrapped command, then what the backend adds
// (mpirun's command); with --json the plan as `render --format json` prints
// it. Under --mpi pmix also the MPI world the hosts' workers will build
// (text, and "mpi_world" in the JSON).
int print_dry_run(const JobSpec& job, const PlannedJob& planned, const PmixLaunch& pmix, bool json) {
  LaunchContext ctx = preview_context(job, planned);
  auto interfaces = job_interfaces(job, *planned.backend, planned.plan);
  if (!interfaces) {
    return report(interfaces.error());
  }
  ctx.interfaces = std::move(*interfaces);
  auto topologies = job_topologies(job, *planned.backend, planned.plan);
  if (!topologies) {
    return report(topologies.error());
  }
  ctx.topologies = std::move(*topologies);
  if (json) {
    std::string text = plan_json(job, planned.plan, ctx);
    if (pmix.adopted) {
      Json doc = Json::parse(text);
      doc["mpi_world"] = pmix::world_json(pmix_world_view(job, planned.plan, pmix));
      text = to_json_text(doc) + "\n";
    }
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  write_plan_table(job, planned.plan, ctx, write_stdout);
  std::fputs(interfaces_text(planned.plan, ctx.interfaces, rank0_address(planned.plan)).c_str(), stdout);
  std::fputs(host_env_text(job, planned.plan).c_str(), stdout);
  std::fputs(bindings_text(job, planned.plan, ctx).c_str(), stdout);
  auto launches = build_launches(job, planned.plan, ctx, rank_place(*planned.backend), environ);
  std::fputs(wrapped_text(job, launches).c_str(), stdout);
  std::fputs(planned.backend->dry_run_text(launches).c_str(), stdout);
  if (pmix.adopted) {
    std::fputs(pmix::world_text(pmix_world_view(job, planned.plan, pmix)).c_str(), stdout);
  }
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

// What one launch is: --dry-run, --json, the checks of a personality
// (`after_plan`), and `on_planned`, told the plan before the launch.
struct LaunchAsk {
  bool dry_run = false;
  bool json = false;
  AfterPlan after_plan;
  std::function<void(const Plan&)> on_planned;
};

// Plans and launches `job` (its timeout already running), or prints its
// plan with --dry-run.
Result<int> plan_and_launch(JobSpec& job, const LaunchAsk& ask, LaunchOptions launch) {
  if (auto has_command = require_command(job); !has_command) {
    return fail(has_command.error());
  }
  if (ask.dry_run) {
    net::set_name_lookup(net::NameLookup::no_dns);  // a dry run never waits on DNS
  }
  auto planned = plan_mpi_job(job);
  if (!planned) {
    return fail(planned.error());
  }
  if (ask.after_plan) {
    if (auto checked = ask.after_plan(job, *planned); !checked) {
      return fail(checked.error());
    }
  }
  auto pmix = adopt_pmix_launch(job, *planned);
  if (!pmix) {
    return fail(pmix.error());
  }
  if (pmix->adopted && !job.output_ranks.empty()) {
    return fail(ExitCode::usage, "--output-ranks: not available with --mpi pmix (ddl supervises one "
                                 "worker per host there, and each line already names its rank)");
  }
  if (job.stdin_ranks.kind == StdinRanks::Kind::one && job.stdin_ranks.rank >= planned->plan.world_size) {
    const int world = planned->plan.world_size;
    return fail(ExitCode::usage, fmt::format("--stdin: rank {} is not in this job of {} rank{} (0-{})",
                                             job.stdin_ranks.rank, world, world == 1 ? "" : "s", world - 1));
  }
  if (ask.dry_run) {
    return print_dry_run(job, *planned, *pmix, ask.json);
  }
  auto output = output_options(job, planned->plan, ask.json);
  if (!output) {
    return fail(output.error());
  }
  if (pmix->adopted) {
    output->host_ranks = pmix->host_ranks;  // --log-dir: one log per MPI rank
  }
  if (pmix->adopted && job.prefix.empty()) {
    std::string problem;
    output->prefix = *LinePrefix::parse("", problem);  // the worker writes each MPI rank's "[r] "
  }
  output->on_summary = std::move(launch.output.on_summary);
  launch.output = std::move(*output);
  launch.max_restarts = job.max_restarts;
  if (ask.on_planned) {
    ask.on_planned(planned->plan);
  }
  return launch_job(job, *planned, launch);
}

Result<int> run_job(const RunOptions& opts) {
  PhaseTimer reading("read job");
  auto job = load_job_for(opts.common, JobClock::starts);
  reading.end();
  if (!job) {
    return fail(job.error());
  }
  return plan_and_launch(*job, {opts.dry_run, opts.common.json, {}, {}}, {});
}

// A trial's job launched; what the run tells of itself goes into `result`.
Result<int> launch_trial(JobSpec& job, sweep::TrialResult& result) {
  stop::set_timeout(job.timeout);
  LaunchOptions launch;
  launch.output.on_summary = [&result](const JobSummary& summary) {
    result.reason = summary.result;
    result.gang_attempts = summary.attempts;
  };
  LaunchAsk ask;
  ask.on_planned = [&result](const Plan& plan) { result.hosts = sweep::plan_hosts_json(plan); };
  return plan_and_launch(job, ask, std::move(launch));
}

// How the trial ended: its code or error, rank 0's logs, its metric.
void record_end(const Result<int>& code, const sweep::TrialRequest& request, const JobSpec* job,
                sweep::TrialResult& result) {
  result.exit_code = code ? *code : to_int(code.error().code);
  if (!code) {
    result.error = code.error().message;
    result.reason = result.reason.empty() ? sweep::error_reason(code.error()) : result.reason;
  }
  if (job == nullptr) {
    return;
  }
  if (result.gang_attempts > 0) {
    result.rank0_logs = rank_output_logs(job->log_dir, 0, result.gang_attempts - 1, job->split_logs);
  }
  if (job->sweep && job->sweep->metric) {
    if (auto found = sweep::find_metric(request.trial_dir, result.rank0_logs, job->sweep->metric->name)) {
      result.metric = found->value;
      result.metric_source = found->source;
    }
  }
}

// One attempt of a sweep's trial, as its request.json asks; its result.json
// written at the end, whatever the end (src/sweep/trial_contract.hpp).
Result<int> run_trial(const RunOptions& opts) {
  if (auto armed = start_command(opts.common); !armed) {
    return fail(armed.error());
  }
  if (!opts.common.job_file.empty() || opts.dry_run) {
    return fail(ExitCode::usage, "--trial: the request is the whole job; give no job file or --dry-run with it");
  }
  auto request = sweep::read_request(opts.trial);
  if (!request) {
    return fail(request.error());
  }
  sweep::TrialResult result{request->trial, request->attempt};
  result.started = event_time_now();
  const auto start = std::chrono::steady_clock::now();
  auto job = sweep::trial_job(*request);
  Result<int> code = job ? launch_trial(*job, result) : Result<int>(fail(job.error()));
  record_end(code, *request, job ? &*job : nullptr, result);
  result.ended = event_time_now();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (auto written = sweep::write_json_file(request->result, sweep::result_json(result)); !written) {
    print_warning(written.error().message);
  }
  return code;
}

} // namespace

Result<int> run_loaded_job(JobSpec& job, bool dry_run, bool json, const AfterPlan& after_plan) {
  return plan_and_launch(job, {dry_run, json, after_plan, {}}, {});
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
  sub->add_option("--stdin", opts->common.overrides.stdin_ranks,
                  "Which ranks read ddl's stdin: a rank (default 0), all or none (as mpirun --stdin)");
  sub->add_option("--prefix", opts->common.overrides.prefix,
                  "Prefix of each rank line: {rank} {host} {local_rank} {attempt} {partial}; default \"[{rank}{partial}] \"");
  sub->add_flag("--timestamps", opts->common.overrides.timestamps, "Print a UTC time before each rank line");
  sub->add_flag("--split-logs", opts->common.overrides.split_logs,
                "With --log-dir: stdout and stderr in separate files (rank-R.attempt-A.stdout.log, .stderr.log)");
  sub->add_flag("--fold", opts->common.overrides.fold,
                "Print each rank's whole output once at the end, identical ones together (like dshbak -c)");
  sub->add_option("-x,--env", opts->common.overrides.env, "Set K=V for every rank (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--env-file", opts->common.overrides.env_file,
                  "NAME=VALUE lines (# comments, quotes) for every rank, never on a command line");
  sub->add_option("--bind", opts->common.overrides.bind,
                  "Pin each rank to its share of cores (core), its NUMA node (numa) or its GPU's node (gpu); "
                  "default none")
      ->check(CLI::IsMember(bind_names()));
  sub->add_option("--mpi", opts->common.overrides.mpi,
                  "How MPI ranks become one world: mpirun, pmix (ddl hosts a PMIx server on each host; "
                  "srun --mpi=pmix under backend slurm), or auto (pmix where proven); [mpi] launch")
      ->check(CLI::IsMember(mpi_launch_names()));
  // The trial contract (man ddl, TRIAL CONTRACT): how `ddl sweep` runs a trial; not for users.
  sub->add_option("--trial", opts->trial, "Run one attempt of a sweep's trial from its request.json")
      ->group("");
  sub->footer("The options end at the first word that is none of run's, nor the JOB file (a .toml, or any file "
              "that is not executable): that word is the program, the rest its arguments (replacing job.command); "
              "-- also ends them.\n\n"
              "Examples:\n  ddl run --np 4 python3 -u train.py --epochs 3\n"
              "  ddl run -H 'node[1-2]:8' --name resnet job.toml\n  ddl run job.toml --dry-run");
  sub->callback([&selected, opts] {
    selected = [opts] {
      auto code = opts->trial.empty() ? run_job(*opts) : run_trial(*opts);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
