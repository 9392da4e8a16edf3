// SPDX-License-Identifier: MIT
// ddl sweep: a hyperparameter search, each trial a gang launched by `ddl run`
// on free slots (src/sweep).
// GCC 12 reports a false "potential null pointer dereference" inside CLI11's
// split() once it is inlined here (as in bench_options.cpp).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <fmt/core.h>

#include "backends/ssh/ssh_broker.hpp"
#include "cmd/command.hpp"
#include "src/session/sweep_setup.hpp"
#include "src/sweep/report_html.hpp"
#include "src/sweep/results.hpp"
#include "src/sweep/sweep_job.hpp"
#include "src/util/log.hpp"
#include "src/util/table.hpp"
#include "src/util/text.hpp"

namespace ddl::cmd {

namespace {

struct SweepOptions {
  CommonOptions common;
  std::string resume;
  std::string dir;
  bool dry_run = false;
  bool report = false;  // print the path of SWEEP_DIR/report.html
};

int print_dry_run(const SweepOptions& opts, const sweep::SweepConfig& config, const std::vector<sweep::Trial>& trials,
                  sweep::SlotPool pool, const std::vector<int>& todo) {
  Json list = Json::array();
  std::vector<TableRow> rows{{"TRIAL", "PARAMETERS", "HOSTS", "COMMAND"}};
  int running = 0;
  for (int index : todo) {
    const sweep::Trial& trial = trials.at(static_cast<std::size_t>(index));
    const bool room = config.max_parallel == 0 || running < config.max_parallel;
    auto placed = room ? pool.take(config.np) : std::nullopt;
    running += placed ? 1 : 0;
    auto command = sweep::substitute(config.command, trial, config.shell);
    std::string words;
    for (const std::string& word : command) words += (words.empty() ? "" : " ") + shell_word(word);
    const std::string hosts = placed ? sweep::hosts_text(pool.specs(*placed)) : "queued";
    rows.push_back({std::to_string(index), sweep::describe(trial), hosts, words});
    list.push_back(Json{{"trial", index}, {"params", sweep::params_json(trial)},
                        {"hosts", placed ? Json(hosts) : Json(nullptr)}, {"command", command}});
  }
  if (opts.common.json) {
    std::printf("%s\n", to_json_text(Json{{"np", config.np}, {"slots", pool.usable_slots()}, {"trials", list}}).c_str());
  } else {
    std::fputs(align_columns(rows).c_str(), stdout);
    std::printf("%zu trials, %d ranks each, %d slots; \"queued\" trials start as slots free up\n", todo.size(),
                config.np, pool.usable_slots());
  }
  return 0;
}

// `report`: the path of report.html ("" when it could not be written): a
// key of --json, a last line with --report.
void print_results(const SweepOptions& opts, const std::string& dir, const std::vector<sweep::Trial>& trials,
                   const sweep::SweepOutcome& outcome, const JobSpec& job, int slots, const std::string& report) {
  if (opts.common.json) {
    Json doc = sweep::results_json(dir, trials, outcome, job.sweep->metric, slots);
    doc["report"] = report.empty() ? Json(nullptr) : Json(report);
    std::printf("%s\n", to_json_text(doc).c_str());
    return;
  }
  std::fputs(sweep::results_table(trials, outcome, job.sweep->metric).c_str(), stdout);
  for (const auto& [host, reason] : outcome.excluded) std::printf("excluded: %s: %s\n", host.c_str(), reason.c_str());
  std::printf("sweep directory: %s\n", dir.c_str());
  if (opts.report && !report.empty()) std::printf("%s\n", report.c_str());
  std::fflush(stdout);
}

Result<int> run_sweep_command(SweepOptions opts) {
  auto overrides = start_command(opts.common);
  if (!overrides) return fail(overrides.error());
  session::SweepRequest request{opts.common.job_file, opts.dir, opts.resume, std::move(*overrides),
                                ::isatty(2) != 0 && !opts.common.quiet && !opts.common.json, opts.common.quiet};
  auto prepared = session::prepare_sweep(request);
  if (!prepared) return fail(prepared.error());
  const JobSpec* job = &prepared->job.job;
  const std::string& dir = prepared->dir;
  const auto& trials = prepared->trials;
  const std::vector<int>& todo = prepared->todo;
  sweep::SweepConfig& config = prepared->config;
  sweep::SlotPool& pool = prepared->pool;
  if (opts.dry_run) return print_dry_run(opts, config, trials, pool, todo);

  auto journal = session::open_sweep_journal(*prepared);
  if (!journal) return fail(journal.error());
  if (!opts.common.quiet) {
    std::fprintf(stderr, "ddl sweep: %zu trials (%zu to run), %d ranks each, on %d slots (%s); directory %s\n",
                 trials.size(), todo.size(), config.np, pool.total_slots(), prepared->hosts.backend.c_str(), dir.c_str());
  }
  // Over ssh, one connection per host for all the trials (issue 32).
  std::unique_ptr<SshBroker> broker;
  if (prepared->hosts.shares_broker) {
    auto started = SshBroker::start(job->ssh, dir);
    if (!started && started.error().code == ExitCode::usage) {
      return fail(started.error());  // a folder someone else prepared
    }
    if (!started) {
      print_warning(fmt::format("ddl sweep: {}; each trial connects to its hosts itself", started.error().message));
    } else {
      broker = std::move(*started);
      config.ssh_broker = broker->socket();
    }
  }
  auto outcome = sweep::run_sweep(config, trials, todo, std::move(prepared->outcomes), pool, *journal);
  broker.reset();
  if (!outcome) return fail(outcome.error());
  const int code = sweep::sweep_exit_code(*outcome);
  if (auto end = journal->append(Json{{"event", "end"}, {"exit_code", code}}); !end) return fail(end.error());
  auto report = sweep::write_report(dir, job->name, trials, *outcome, job->sweep->metric);
  if (!report) print_warning(fmt::format("ddl sweep: {}", report.error().message));
  print_results(opts, dir, trials, *outcome, *job, pool.total_slots(), report ? *report : "");
  return code;
}

} // namespace

void add_sweep(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "Run a hyperparameter search: each trial a gang on free slots");
  add_common_options(*sub, opts->common);
  sub->add_option("--resume", opts->resume, "Go on with the sweep in DIR: skip finished trials, rerun the rest");
  sub->add_option("--dir", opts->dir, "The sweep directory (default: ddl-sweeps/NAME-TIME)");
  sub->add_flag("--dry-run", opts->dry_run, "List the trials and where the first ones would run; launch nothing");
  sub->add_flag("--report", opts->report,
                "At the end, print the path of SWEEP_DIR/report.html (the trials and a chart; every sweep writes it)");
  sub->add_option("--timeout", opts->common.overrides.timeout, "End a trial after DUR (e.g. 30m)");
  sub->add_option("--max-restarts", opts->common.overrides.max_restarts,
                  "Restart a trial's gang up to N times within one attempt");
  sub->add_option("-x,--env", opts->common.overrides.env, "Set K=V for every rank of every trial (repeatable)");
  sub->add_flag("--preflight", opts->common.overrides.preflight,
                "Check the network among each trial's hosts before its ranks start; [preflight]");
  sub->add_flag("--no-preflight", opts->common.overrides.no_preflight, "No check before a trial's ranks start");
  sub->footer("--np sets the ranks per trial (sweep.np, else [launch] np, else 1). Everything after -- is the command; "
              "{name} in it is replaced by the trial's value of parameter name.\n\n"
              "Examples:\n  ddl sweep sweep.toml --dry-run\n  ddl sweep sweep.toml -- python3 train.py --lr {learning_rate}");
  sub->callback([&selected, opts] {
    selected = [opts] {
      auto code = run_sweep_command(*opts);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
