// SPDX-License-Identifier: MIT
#include "src/session/sweep_setup.hpp"

#include <filesystem>

#include <fmt/core.h>

#include "backends/registry.hpp"
#include "src/launch/plan_hosts.hpp"
#include "src/render/frameworks/torch.hpp"
#include "src/util/own_path.hpp"
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

Result<PreparedSweep> prepare_sweep(const SweepRequest& request) {
  namespace fs = std::filesystem;
  std::optional<sweep::JournalState> journal_state;
  if (!request.resume.empty()) {
    // Another user's folder could hold a journal that runs their command as this user.
    if (auto own = own_folder(request.resume, "sweep folder", false); !own) return fail(own.error());
    auto state = sweep::read_journal(request.resume);
    if (!state) return fail(state.error());
    journal_state = std::move(*state);
  } else if (request.job_file.empty()) {
    return fail(ExitCode::usage, "ddl sweep needs a job file with a [sweep] section (or --resume DIR)");
  }
  auto sweep_job = sweep::read_sweep_job(request.resume, request.job_file, request.overrides, journal_state);
  if (!sweep_job) return fail(sweep_job.error());
  const JobSpec* job = &sweep_job->job;
  if (!job->sweep) {
    return fail(ExitCode::usage, fmt::format("{}: no [sweep] section; see 'ddl init --template sweep'", job->source));
  }
  if (auto has_command = require_command(*job); !has_command) return fail(has_command.error());
  auto np = sweep::trial_np(*job, request.overrides);
  if (!np) return fail(np.error());
  auto hosts = sweep_hosts(*job);
  if (!hosts) return fail(hosts.error());
  sweep::SlotPool pool(hosts->hosts, sweep::slot_gpus(*job, hosts->hosts));
  const std::string given = !request.resume.empty() ? request.resume : request.dir;
  const std::string dir =
      fs::absolute(!given.empty() ? given : sweep::default_sweep_dir(*job)).lexically_normal().string();
  sweep::SweepConfig config = make_sweep_config(*sweep_job, *hosts, dir, *np, request.progress, request.quiet);
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
    auto kept = sweep::resumed_outcomes(dir, trials, *journal_state);
    if (!kept) return fail(kept.error());
    outcomes = std::move(*kept);
  }
  std::vector<int> todo;
  for (const auto& out : outcomes) {
    if (out.result == "not_run") todo.push_back(out.trial);
  }
  return PreparedSweep{std::move(*sweep_job), std::move(*hosts), std::move(pool), dir, std::move(config),
                       trials, std::move(outcomes), std::move(todo), std::move(journal_state)};
}

Result<sweep::Journal> open_sweep_journal(const PreparedSweep& prepared) {
  if (auto own = sweep::own_sweep_folders(prepared.dir, prepared.todo); !own) return fail(own.error());
  auto journal = sweep::Journal::open(prepared.dir, !prepared.journal);
  if (!journal) return fail(journal.error());
  auto first = prepared.journal ? journal->append(Json{{"event", "resumed"}, {"trials", prepared.todo.size()}})
                                : journal->append(sweep::sweep_record(prepared.job, prepared.trials));
  if (!first) return fail(first.error());
  return journal;
}

} // namespace ddl::session
