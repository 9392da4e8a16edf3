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
#include "src/session/host_probes.hpp"
#include "src/session/job_run.hpp"
#include "src/session/trial.hpp"
#include "src/util/json.hpp"
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
int print_dry_run(const JobSpec& job, const session::PlannedJob& planned, const session::PmixLaunch& pmix,
                  bool json) {
  LaunchContext ctx = session::preview_context(job, planned);
  auto interfaces = session::job_interfaces(job, *planned.backend, planned.plan);
  if (!interfaces) {
    return report(interfaces.error());
  }
  ctx.interfaces = std::move(*interfaces);
  auto topologies = session::job_topologies(job, *planned.backend, planned.plan);
  if (!topologies) {
    return report(topologies.error());
  }
  ctx.topologies = std::move(*topologies);
  if (json) {
    std::string text = plan_json(job, planned.plan, ctx);
    if (pmix.adopted) {
      Json doc = Json::parse(text);
      doc["mpi_world"] = pmix::world_json(session::pmix_world_view(job, planned.plan, pmix));
      text = to_json_text(doc) + "\n";
    }
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  write_plan_table(job, planned.plan, ctx, write_stdout);
  std::fputs(interfaces_text(planned.plan, ctx.interfaces, session::rank0_address(planned.plan)).c_str(), stdout);
  std::fputs(host_env_text(job, planned.plan).c_str(), stdout);
  std::fputs(bindings_text(job, planned.plan, ctx).c_str(), stdout);
  auto launches = build_launches(job, planned.plan, ctx, session::rank_place(*planned.backend), environ);
  std::fputs(wrapped_text(job, launches).c_str(), stdout);
  std::fputs(planned.backend->dry_run_text(launches).c_str(), stdout);
  if (pmix.adopted) {
    std::fputs(pmix::world_text(session::pmix_world_view(job, planned.plan, pmix)).c_str(), stdout);
  }
  return 0;
}

// Plans `job` (its timeout already running) through a JobRun and prints its
// plan with --dry-run, or launches it.
Result<int> plan_and_launch(const JobSpec& job, session::RunAsk ask) {
  const bool dry_run = ask.dry_run;
  const bool json = ask.json;
  session::JobRun run(job, std::move(ask));
  if (auto planned = run.plan(); !planned) {
    return fail(planned.error());
  }
  if (dry_run) {
    return print_dry_run(run.job(), run.planned(), run.pmix(), json);
  }
  return run.launch();
}

Result<int> run_job(const RunOptions& opts) {
  PhaseTimer reading("read job");
  auto job = load_job_for(opts.common, JobClock::starts);
  reading.end();
  if (!job) {
    return fail(job.error());
  }
  session::RunAsk ask;
  ask.dry_run = opts.dry_run;
  ask.json = opts.common.json;
  return plan_and_launch(*job, std::move(ask));
}

// One attempt of a sweep's trial, as its request.json asks.
Result<int> run_trial(const RunOptions& opts) {
  if (auto armed = start_command(opts.common); !armed) {
    return fail(armed.error());
  }
  if (!opts.common.job_file.empty() || opts.dry_run) {
    return fail(ExitCode::usage, "--trial: the request is the whole job; give no job file or --dry-run with it");
  }
  return session::run_trial(opts.trial);
}

} // namespace

Result<int> run_loaded_job(const JobSpec& job, bool dry_run, const session::PersonaCheck& persona) {
  session::RunAsk ask;
  ask.dry_run = dry_run;
  ask.persona = persona;
  return plan_and_launch(job, std::move(ask));
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
  sub->add_flag("--preflight", opts->common.overrides.preflight,
                "Check the network among the hosts before the ranks start; a host or link behind the median "
                "is left out (np a range) or stops the job (exit 3); [preflight] enabled = true");
  sub->add_flag("--no-preflight", opts->common.overrides.no_preflight, "No check before the ranks start, whatever [preflight] enabled says");
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
              "  ddl run -H 'node[1-2]:8' --name resnet job.toml\n  ddl run job.toml --dry-run\n"
              "  ddl run -H 'node[01-16]:8' --np 64:128 --preflight job.toml");
  sub->callback([&selected, opts] {
    selected = [opts] {
      auto code = opts->trial.empty() ? run_job(*opts) : run_trial(*opts);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
