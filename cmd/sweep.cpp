// SPDX-License-Identifier: MIT
// ddl sweep: a hyperparameter search, each trial a gang launched by `ddl run`
// on free slots (src/sweep).
// GCC 12 reports a false "potential null pointer dereference" inside CLI11's
// split() once it is inlined here (as in bench_options.cpp).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include <fmt/core.h>

#include "backends/registry.hpp"
#include "backends/ssh/ssh_broker.hpp"
#include "cmd/command.hpp"
#include "src/launch/plan_hosts.hpp"
#include "src/plan/plan.hpp"
#include "src/render/frameworks/torch.hpp"
#include "src/sweep/report_html.hpp"
#include "src/sweep/results.hpp"
#include "src/sweep/runner.hpp"
#include "src/util/log.hpp"
#include "src/util/own_path.hpp"
#include "src/util/process.hpp"
#include "src/util/table.hpp"
#include "src/util/text.hpp"

namespace ddl::cmd {

namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  CommonOptions common;
  std::string resume;
  std::string dir;
  bool dry_run = false;
  bool report = false;  // print the path of SWEEP_DIR/report.html
};

// The sweep's hosts, through its backend and the host pipeline (as `ddl run`
// finds them: --include / --exclude, addresses, GPU probe).
struct SweepHosts {
  std::string backend;
  bool shares_broker = false;  // the trials reach the hosts through the sweep's broker
  Inventory hosts;
};

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

// The job a sweep runs, and its snapshot that every trial gets.
struct SweepJob {
  sweep::JobSnapshot snapshot;
  JobSpec job;
};

// --resume: the journal's snapshot, so that the rest runs as the sweep
// began; a job file or trial options given again must be the same.
Result<sweep::JobSnapshot> resumed_snapshot(const SweepOptions& opts, const Overrides& overrides,
                                            const Json& stored) {
  auto snapshot = sweep::snapshot_from_json(stored);
  if (!snapshot) {
    return fail(ExitCode::usage, fmt::format("{}: {}", opts.resume, snapshot.error().message));
  }
  if (!opts.common.job_file.empty()) {
    auto text = read_job_file(opts.common.job_file);
    if (!text) return fail(text.error());
    if (*text != snapshot->toml) {
      return fail(ExitCode::usage, fmt::format("{}: the job file changed since this sweep began; resume without "
                                               "it to run the rest as the sweep began (its copy is in {}/{}), "
                                               "or start a new sweep",
                                               opts.common.job_file, opts.resume, sweep::k_journal_name));
    }
  }
  const sweep::JobSnapshot given{"", "", sweep::trial_options(overrides)};
  if (sweep::has_trial_options(overrides) &&
      sweep::snapshot_json(given)["options"] != sweep::snapshot_json(*snapshot)["options"]) {
    return fail(ExitCode::usage, fmt::format("{}: the options -x, --timeout, --max-restarts, --backend and the "
                                             "command differ from the ones this sweep began with ({}); resume "
                                             "without them, or with the same",
                                             opts.resume,
                                             to_json_text(sweep::snapshot_json(*snapshot)["options"],
                                                          JsonStyle::spaced)));
  }
  return snapshot;
}

Result<SweepJob> read_sweep_job(const SweepOptions& opts, const Overrides& overrides,
                                const std::optional<sweep::JournalState>& journal) {
  if (journal && journal->sweep.contains("snapshot")) {
    auto snapshot = resumed_snapshot(opts, overrides, journal->sweep["snapshot"]);
    if (!snapshot) return fail(snapshot.error());
    auto job = sweep::snapshot_job(*snapshot, overrides);
    if (!job) return fail(job.error());
    return SweepJob{std::move(*snapshot), std::move(*job)};
  }
  // A new sweep (or the journal of a ddl that kept no snapshot): the file now.
  const std::string file = opts.common.job_file.empty() ? journal->sweep.value("job", "") : opts.common.job_file;
  auto text = read_job_file(file);
  if (!text) return fail(text.error());
  auto job = parse_job(*text, file, overrides);
  if (!job) return fail(job.error());
  return SweepJob{{fs::absolute(file).string(), std::move(*text), sweep::trial_options(overrides)}, std::move(*job)};
}

// Ranks per trial: --np N, else sweep.np, else [launch] np, else 1. Both
// keys with different values, or a range, are refused: either would
// otherwise be dropped without a word.
Result<int> trial_np(const JobSpec& job, const Overrides& overrides) {
  if (overrides.np) {
    if (overrides.np->find(':') != std::string::npos) {
      return fail(ExitCode::usage, fmt::format("--np: {}: ddl sweep takes the ranks of each trial, N, not MIN:MAX",
                                               *overrides.np));
    }
    return *job.launch.np.max;
  }
  const NpRange& launch = job.launch.np;
  if (launch.elastic()) {
    return fail(ExitCode::usage, fmt::format("{}: [launch] np or min_np: ddl sweep takes the ranks of each trial, "
                                             "N (sweep.np), not a range",
                                             job.source));
  }
  if (job.sweep->np && launch.max && *launch.max != *job.sweep->np) {
    return fail(ExitCode::usage, fmt::format("{}: sweep.np = {} and [launch] np = {}: a trial's ranks are sweep.np; "
                                             "keep one of the two",
                                             job.source, *job.sweep->np, *launch.max));
  }
  return job.sweep->np.value_or(launch.max.value_or(1));
}

// Ports that a job file fixes would be shared by trials that run at once.
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

// Per host and slot, the GPUs of a trial rank holding that slot: those
// `ddl run` binds to that slot's rank on the sweep's hosts (src/plan).
sweep::SlotGpus slot_gpus(JobSpec job, const Inventory& hosts) {
  sweep::SlotGpus out;
  int total = 0;
  for (const Host& host : hosts) total += host.slots;
  job.launch.np = NpRange{total, std::nullopt};
  auto plan = make_plan(job, hosts);
  if (!job.launch.bind_gpus || !plan || total == 0) {
    return out;
  }
  for (const Host& host : hosts) {
    std::vector<std::vector<int>> slots;
    for (const RankSlot& rank : plan->ranks) {
      if (plan->hosts.at(rank.host_index).name == host.name) {
        slots.push_back(rank.gpus);
      }
    }
    slots.resize(static_cast<std::size_t>(host.slots));
    out.push_back(std::move(slots));
  }
  return out;
}

std::string default_dir(const JobSpec& job) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "%Y%m%d-%H%M%S", &utc);
  std::string dir = fmt::format("ddl-sweeps/{}-{}", job.name, stamp.data());
  for (int n = 2; fs::exists(dir); ++n) dir = fmt::format("ddl-sweeps/{}-{}-{}", job.name, stamp.data(), n);
  return dir;
}

sweep::SweepConfig make_config(const SweepOptions& opts, const SweepJob& sweep_job, const SweepHosts& hosts,
                               const std::string& dir, int np) {
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
  config.progress = ::isatty(2) != 0 && !opts.common.quiet && !opts.common.json;
  config.quiet = opts.common.quiet;
  return config;
}

Json trials_json(const std::vector<sweep::Trial>& trials) {
  Json list = Json::array();
  for (const sweep::Trial& trial : trials) list.push_back(Json{{"trial", trial.index}, {"params", sweep::params_json(trial)}});
  return list;
}

Json sweep_record(const SweepJob& sweep_job, const std::vector<sweep::Trial>& trials) {
  return Json{{"event", "sweep"},
              {"version", 1},
              {"job", sweep_job.snapshot.file},
              {"name", sweep_job.job.name},
              {"trials", trials_json(trials)},
              {"snapshot", sweep::snapshot_json(sweep_job.snapshot)}};
}

// --resume: the journal's trials must be the job's; finished ones are kept.
Result<std::vector<sweep::TrialOutcome>> resumed(const std::string& dir, const std::vector<sweep::Trial>& trials,
                                                 const sweep::JournalState& state) {
  if (state.sweep.value("trials", Json::array()) != trials_json(trials)) {
    return fail(ExitCode::usage, fmt::format("{}: the job's [sweep] now makes other trials than this sweep's "
                                             "journal lists; resume with the job file as it was", dir));
  }
  std::vector<sweep::TrialOutcome> outcomes(trials.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) outcomes[i].trial = static_cast<int>(i);
  for (const auto& [index, record] : state.finished) {
    if (index < 0 || static_cast<std::size_t>(index) >= outcomes.size()) continue;
    sweep::TrialOutcome& out = outcomes[static_cast<std::size_t>(index)];
    out.result = record.value("result", "failed");
    out.exit_code = record.value("exit_code", 0);
    out.seconds = record.value("seconds", 0.0);
    out.hosts = record.value("hosts", "");
    out.attempts = record.value("attempt", 0) + 1;
    if (record.contains("metric") && record["metric"].is_number()) out.metric = record["metric"].get<double>();
  }
  return outcomes;
}

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

int exit_code(const sweep::SweepOutcome& outcome) {
  if (outcome.stop_signal != 0) return 128 + outcome.stop_signal;
  for (const auto& out : outcome.trials) {
    if (out.result != "ok") return 1;
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

// The sweep's folder, and the trial folders already in it (a resume's) that
// are to run again, checked before anything is written there.
Result<void> own_sweep_folders(const std::string& dir, const std::vector<int>& todo) {
  if (auto own = own_folder(dir, "sweep folder", true); !own) return fail(own.error());
  for (int trial : todo) {
    const std::string folder = dir + "/" + sweep::trial_folder(trial);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(folder, ec))) continue;
    if (auto own = own_folder(folder, "sweep folder", false); !own) return fail(own.error());
  }
  return {};
}

Result<int> run_sweep_command(SweepOptions opts) {
  auto overrides = start_command(opts.common);
  if (!overrides) return fail(overrides.error());
  std::optional<sweep::JournalState> journal_state;
  if (!opts.resume.empty()) {
    // Another user's folder could hold a journal that runs their command as this user.
    if (auto own = own_folder(opts.resume, "sweep folder", false); !own) return fail(own.error());
    auto state = sweep::read_journal(opts.resume);
    if (!state) return fail(state.error());
    journal_state = std::move(*state);
  } else if (opts.common.job_file.empty()) {
    return fail(ExitCode::usage, "ddl sweep needs a job file with a [sweep] section (or --resume DIR)");
  }
  auto sweep_job = read_sweep_job(opts, *overrides, journal_state);
  if (!sweep_job) return fail(sweep_job.error());
  const JobSpec* job = &sweep_job->job;
  if (!job->sweep) {
    return fail(ExitCode::usage, fmt::format("{}: no [sweep] section; see 'ddl init --template sweep'", job->source));
  }
  if (auto has_command = require_command(*job); !has_command) return fail(has_command.error());
  auto np = trial_np(*job, *overrides);
  if (!np) return fail(np.error());
  auto hosts = sweep_hosts(*job);
  if (!hosts) return fail(hosts.error());
  sweep::SlotPool pool(hosts->hosts, slot_gpus(*job, hosts->hosts));
  const std::string dir = fs::absolute(!opts.resume.empty() ? opts.resume : !opts.dir.empty() ? opts.dir : default_dir(*job)).lexically_normal().string();
  sweep::SweepConfig config = make_config(opts, *sweep_job, *hosts, dir, *np);
  if (config.np > pool.total_slots()) {
    return fail(ExitCode::usage, fmt::format("sweep.np = {}: the hosts have {} slots in all", config.np, pool.total_slots()));
  }
  const int at_once = pool.total_slots() / config.np;
  if (auto ports = check_fixed_ports(*job, config.max_parallel > 0 ? std::min(at_once, config.max_parallel) : at_once); !ports) {
    return fail(ports.error());
  }
  const auto trials = sweep::make_trials(*job->sweep);
  std::vector<sweep::TrialOutcome> outcomes(trials.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) outcomes[i].trial = static_cast<int>(i);
  if (journal_state) {
    auto kept = resumed(dir, trials, *journal_state);
    if (!kept) return fail(kept.error());
    outcomes = std::move(*kept);
  }
  std::vector<int> todo;
  for (const auto& out : outcomes) {
    if (out.result == "not_run") todo.push_back(out.trial);
  }
  if (opts.dry_run) return print_dry_run(opts, config, trials, pool, todo);

  if (auto own = own_sweep_folders(dir, todo); !own) return fail(own.error());
  auto journal = sweep::Journal::open(dir, !journal_state);
  if (!journal) return fail(journal.error());
  auto first = journal_state ? journal->append(Json{{"event", "resumed"}, {"trials", todo.size()}})
                             : journal->append(sweep_record(*sweep_job, trials));
  if (!first) return fail(first.error());
  if (!opts.common.quiet) {
    std::fprintf(stderr, "ddl sweep: %zu trials (%zu to run), %d ranks each, on %d slots (%s); directory %s\n",
                 trials.size(), todo.size(), config.np, pool.total_slots(), hosts->backend.c_str(), dir.c_str());
  }
  // Over ssh, one connection per host for all the trials (issue 32).
  std::unique_ptr<SshBroker> broker;
  if (hosts->shares_broker) {
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
  auto outcome = sweep::run_sweep(config, trials, todo, std::move(outcomes), pool, *journal);
  broker.reset();
  if (!outcome) return fail(outcome.error());
  const int code = exit_code(*outcome);
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
