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
#include "cmd/command.hpp"
#include "src/plan/plan.hpp"
#include "src/sweep/results.hpp"
#include "src/sweep/runner.hpp"
#include "src/util/log.hpp"
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
};

// The sweep's hosts, through its backend (GPU counts probed for slots = "gpus").
struct SweepHosts {
  std::string backend;
  Inventory hosts;
};

Result<SweepHosts> sweep_hosts(const JobSpec& job) {
  auto selected = select_backend(job);
  if (!selected) {
    return fail(selected.error());
  }
  if (selected->backend->name() == "kubernetes") {
    return fail(ExitCode::usage, "ddl sweep: the kubernetes backend cannot place a trial on some of its pods; "
                                 "use ssh over the pods' addresses or run one job per trial");
  }
  Result<Inventory> hosts = std::move(selected->hosts);
  if (job.hosts.slots_from_gpus) {
    hosts = selected->backend->probe_gpus(std::move(*hosts));
    if (!hosts) {
      return fail(hosts.error());
    }
  }
  return SweepHosts{std::string(selected->backend->name()), std::move(*hosts)};
}

// Ports that a job file fixes would be shared by trials that run at once.
Result<void> check_fixed_ports(const JobSpec& job, int most_at_once) {
  if (most_at_once < 2) {
    return {};
  }
  auto uses = [&](Framework f) { return std::ranges::find(job.frameworks, f) != job.frameworks.end(); };
  std::string problem;
  if (job.rendezvous.port != 0) {
    problem = fmt::format("rendezvous.port = {}", job.rendezvous.port);
  } else if (job.torch.master_port != 0 && (uses(Framework::torch) || uses(Framework::jax))) {
    problem = fmt::format("torch.master_port = {}", job.torch.master_port);
  }
  if (problem.empty()) {
    return {};
  }
  return fail(ExitCode::usage, fmt::format("{}: trials that run at once would share this port; set it to 0 "
                                           "(a free port per trial) or sweep.max_parallel = 1", problem));
}

// Per host and slot, the CUDA_VISIBLE_DEVICES of a trial holding that slot:
// the GPUs `ddl run` would bind to that slot's rank (src/plan).
std::vector<std::vector<std::string>> slot_gpus(JobSpec job, const Inventory& hosts) {
  std::vector<std::vector<std::string>> out;
  int total = 0;
  for (const Host& host : hosts) total += host.slots;
  job.launch.np = total;
  auto plan = make_plan(job, hosts);
  if (!job.launch.bind_gpus || !plan || total == 0) {
    return out;
  }
  for (const Host& host : hosts) {
    std::vector<std::string> slots;
    for (const RankSlot& rank : plan->ranks) {
      if (plan->hosts.at(rank.host_index).name == host.name) {
        std::string ids;
        for (int gpu : rank.gpus) ids += (ids.empty() ? "" : ",") + std::to_string(gpu);
        slots.push_back(ids);
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

sweep::SweepConfig make_config(const SweepOptions& opts, const JobSpec& job, const SweepHosts& hosts,
                               const std::string& dir) {
  sweep::SweepConfig config;
  config.dir = dir;
  config.ddl = own_executable_path();
  config.run_args = {fs::absolute(job.source).string(), "--backend", hosts.backend};
  for (const std::string& assignment : opts.common.overrides.env) {
    config.run_args.insert(config.run_args.end(), {"-x", assignment});
  }
  if (opts.common.overrides.timeout) config.run_args.insert(config.run_args.end(), {"--timeout", *opts.common.overrides.timeout});
  if (opts.common.overrides.max_restarts) {
    config.run_args.insert(config.run_args.end(), {"--max-restarts", std::to_string(*opts.common.overrides.max_restarts)});
  }
  config.shell = job.command_is_shell;
  config.command = job.command_is_shell ? std::vector<std::string>{"/bin/sh", "-c", job.command.front()} : job.command;
  const SweepSection& spec = *job.sweep;
  config.np = opts.common.overrides.np.value_or(spec.np);
  config.max_parallel = spec.max_parallel;
  config.retries = spec.retries;
  config.rank_restarts = job.max_restarts;
  config.metric = spec.metric;
  config.slot_gpus = slot_gpus(job, hosts.hosts);
  config.progress = ::isatty(2) != 0 && !opts.common.quiet && !opts.common.json;
  config.quiet = opts.common.quiet;
  return config;
}

Json trials_json(const std::vector<sweep::Trial>& trials) {
  Json list = Json::array();
  for (const sweep::Trial& trial : trials) list.push_back(Json{{"trial", trial.index}, {"params", sweep::params_json(trial)}});
  return list;
}

Json sweep_record(const JobSpec& job, const std::vector<sweep::Trial>& trials) {
  return Json{{"event", "sweep"}, {"version", 1}, {"job", fs::absolute(job.source).string()},
              {"name", job.name}, {"trials", trials_json(trials)}};
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
    const std::string hosts = placed ? sweep::host_spec(pool, *placed) : "queued";
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

void print_results(const SweepOptions& opts, const std::string& dir, const std::vector<sweep::Trial>& trials,
                   const sweep::SweepOutcome& outcome, const JobSpec& job, int slots) {
  if (opts.common.json) {
    std::printf("%s\n", to_json_text(sweep::results_json(dir, trials, outcome, job.sweep->metric, slots)).c_str());
    return;
  }
  std::fputs(sweep::results_table(trials, outcome, job.sweep->metric).c_str(), stdout);
  for (const auto& [host, reason] : outcome.excluded) std::printf("excluded: %s: %s\n", host.c_str(), reason.c_str());
  std::printf("sweep directory: %s\n", dir.c_str());
  std::fflush(stdout);
}

Result<int> run_sweep_command(SweepOptions opts) {
  std::optional<sweep::JournalState> journal_state;
  if (!opts.resume.empty()) {
    auto state = sweep::read_journal(opts.resume);
    if (!state) return fail(state.error());
    if (opts.common.job_file.empty()) opts.common.job_file = state->sweep.value("job", "");
    journal_state = std::move(*state);
  }
  if (opts.common.job_file.empty()) {
    return fail(ExitCode::usage, "ddl sweep needs a job file with a [sweep] section (or --resume DIR)");
  }
  auto job = load_job_for(opts.common);
  if (!job) return fail(job.error());
  if (!job->sweep) {
    return fail(ExitCode::usage, fmt::format("{}: no [sweep] section; see 'ddl init --template sweep'", job->source));
  }
  if (auto has_command = require_command(*job); !has_command) return fail(has_command.error());
  auto hosts = sweep_hosts(*job);
  if (!hosts) return fail(hosts.error());
  sweep::SlotPool pool(hosts->hosts);
  const std::string dir = fs::absolute(!opts.resume.empty() ? opts.resume : !opts.dir.empty() ? opts.dir : default_dir(*job)).lexically_normal().string();
  sweep::SweepConfig config = make_config(opts, *job, *hosts, dir);
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

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(ExitCode::launch, fmt::format("cannot create the sweep directory {}: {}", dir, ec.message()));
  auto journal = sweep::Journal::open(dir, !journal_state);
  if (!journal) return fail(journal.error());
  auto first = journal_state ? journal->append(Json{{"event", "resumed"}, {"trials", todo.size()}})
                             : journal->append(sweep_record(*job, trials));
  if (!first) return fail(first.error());
  if (!opts.common.quiet) {
    std::fprintf(stderr, "ddl sweep: %zu trials (%zu to run), %d ranks each, on %d slots (%s); directory %s\n",
                 trials.size(), todo.size(), config.np, pool.total_slots(), hosts->backend.c_str(), dir.c_str());
  }
  auto outcome = sweep::run_sweep(config, trials, todo, std::move(outcomes), pool, *journal);
  if (!outcome) return fail(outcome.error());
  const int code = exit_code(*outcome);
  if (auto end = journal->append(Json{{"event", "end"}, {"exit_code", code}}); !end) return fail(end.error());
  print_results(opts, dir, trials, *outcome, *job, pool.total_slots());
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
  sub->add_option("--timeout", opts->common.overrides.timeout, "End a trial after DUR (e.g. 30m)");
  sub->add_option("--max-restarts", opts->common.overrides.max_restarts,
                  "Restart a trial's gang up to N times within one attempt");
  sub->add_option("-x,--env", opts->common.overrides.env, "Set K=V for every rank of every trial (repeatable)");
  sub->footer("--np sets the ranks per trial (sweep.np). Everything after -- is the command; "
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
