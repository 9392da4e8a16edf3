// SPDX-License-Identifier: MIT
#include "src/session/job_run.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <numeric>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "src/launch/live_server.hpp"
#include "src/launch/restart_policy.hpp"
#include "src/launch/supervisor.hpp"
#include "src/render/frameworks/tensorflow.hpp"
#include "src/session/preflight_gate.hpp"
#include "src/session/round.hpp"
#include "src/session/run_output.hpp"
#include "src/util/net_resolve.hpp"
#include "src/util/file.hpp"
#include "src/util/own_path.hpp"
#include "src/util/phase_timer.hpp"
#include "src/util/rank_logs.hpp"
#include "src/util/signals.hpp"

namespace ddl::session {

namespace {

// The folder of the ranks' TORCHELASTIC_ERROR_FILE: --log-dir (the files
// stay there beside the logs), else a private one removed when the launch
// ends. Only for torch ranks on this machine, whose files ddl reads back.
class ErrorDir {
public:
  ErrorDir() = default;
  ErrorDir(const ErrorDir&) = delete;
  ErrorDir& operator=(const ErrorDir&) = delete;
  ~ErrorDir() {
    if (owned_) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

  Result<void> make(const JobSpec& job, const Backend& backend) {
    if (!wants_error_dir(job, backend)) {
      return {};
    }
    if (!job.log_dir.empty()) {
      auto own = own_folder(job.log_dir, "log folder", true);
      if (!own) {
        return fail(ExitCode::usage, own.error().message);
      }
      path_ = *own;
      // A link planted while the folder was not yet safe must not become a rank's error file.
      remove_foreign_files(path_, rank_file_suffix(RankFile::error_json));
      return {};
    }
    path_ = make_private_dir("ddl-errors");
    if (path_.empty()) {
      return fail(ExitCode::launch, fmt::format("cannot create a folder for the ranks' error files: {}",
                                                std::strerror(errno)));
    }
    owned_ = true;
    return {};
  }

private:
  std::string path_;
  bool owned_ = false;
};

// The job's control socket (ddl ps, logs, stop, signal); none, with a
// warning, when the runtime folder is unsafe: the job itself still runs.
// Under --mpi pmix its ranks are the MPI ranks (`host_ranks`: each host's).
std::unique_ptr<LiveServer> start_live(const JobSpec& job, const PlannedJob& planned,
                                       const std::vector<int>& host_ranks) {
  const int ranks = host_ranks.empty() ? planned.plan.world_size
                                       : std::accumulate(host_ranks.begin(), host_ranks.end(), 0);
  LiveJobInfo info{job.name, ranks, {}, std::string(planned.backend->name()), job.log_dir};
  for (const Host& host : planned.plan.hosts) {
    info.hosts.push_back(host.name);
  }
  auto server = LiveServer::start(std::move(info));
  if (!server) {
    spdlog::warn("no ddl ps/logs/stop/signal for this job: {}", server.error().message);
    return nullptr;
  }
  return std::move(*server);
}

// What the supervisor tells the control socket, and what it asks back.
void attach_live(LiveServer& live, SupervisorOptions& supervisor) {
  supervisor.output.tap = [&live](int rank, Stream stream, std::string_view text, LineEnd end) {
    live.line(rank, stream, text, end);
  };
  supervisor.on_state = [&live](std::string_view state, int attempt) { live.set_state(state, attempt); };
  supervisor.rank_signals = &live.rank_signals();
}

// bench: `job` whose ranks run `program`.
JobSpec with_program(const JobSpec& job, std::vector<std::string> program) {
  JobSpec changed = job;
  changed.command = std::move(program);
  changed.command_is_shell = false;
  return changed;
}

// The hosts the preflight measures: the plan's; for an elastic job those
// the backend reaches (the others are left out by "hosts left", as without
// the gate, which takes these answers instead of asking again).
Inventory hosts_to_check(Backend& backend, const Inventory& planned, bool elastic, ReachAnswers& answers) {
  if (!elastic) {
    return planned;
  }
  const auto problems = backend.preflight(planned);
  Inventory reached;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const std::string problem = i < problems.size() ? problems[i] : std::string();
    answers[planned[i].name] = problem;
    if (problem.empty()) {
      reached.push_back(planned[i]);
    }
  }
  return reached;
}

// One JSON Lines event on stdout, before the gang's own.
void write_event(const Json& event) {
  const std::string line = to_json_text(event) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

} // namespace

// What the launch passes build and supervise() uses, kept until the run ends.
struct JobRun::Launching {
  explicit Launching(RestartRules rules) : policy(std::move(rules)) {}
  RestartPolicy policy;
  ErrorDir error_dir;
  std::unique_ptr<JobRounds> rounds;
};

JobRun::JobRun(const JobSpec& loaded, RunAsk ask) : loaded_(loaded), ask_(std::move(ask)), job_(loaded) {}

JobRun::~JobRun() = default;

Result<void> JobRun::run_passes(std::span<const PassEntry> passes) {
  std::optional<PhaseTimer> phase;
  std::string_view phase_name;
  for (const PassEntry& entry : passes) {
    if (entry.phase != phase_name) {
      phase.reset();
      phase_name = entry.phase;
      if (!phase_name.empty()) {
        phase.emplace(std::string(phase_name));
      }
    }
    const auto start = std::chrono::steady_clock::now();
    auto done = (this->*entry.pass)();
    passes_run_.emplace_back(entry.name);
    spdlog::debug("pass {}: {}", entry.name, phase_time_text(std::chrono::steady_clock::now() - start));
    if (!done) {
      return done;
    }
  }
  return {};
}

Result<void> JobRun::plan() {
  static constexpr PassEntry k_passes[] = {
      {"select backend", "hosts", &JobRun::select_backend},
      {"hosts", "hosts", &JobRun::find_hosts},
      {"plan", "plan", &JobRun::plan_ranks},
      {"preflight", "", &JobRun::preflight},
      {"personality checks", "", &JobRun::persona_checks},
      {"MPI mode", "", &JobRun::mpi_mode},
  };
  return run_passes(k_passes);
}

Result<int> JobRun::launch() {
  static constexpr PassEntry k_passes[] = {
      {"output", "", &JobRun::output},
      {"hosts left", "", &JobRun::hosts_left},
      {"rounds", "connect", &JobRun::rounds},
      {"supervise", "", &JobRun::supervise_gang},
  };
  if (auto done = run_passes(k_passes); !done) {
    return fail(done.error());
  }
  return code_ ? std::move(*code_) : Result<int>(fail(ExitCode::launch, "the gang was never supervised"));
}

Result<int> JobRun::run() {
  if (auto planned = plan(); !planned) {
    return fail(planned.error());
  }
  return launch();
}

// The backend (its own program: bench's worker; else the job's, the MPI
// mode of mpi.launch auto resolved first, as render and hosts resolve it).
Result<void> JobRun::select_backend() {
  if (!ask_.worker) {
    if (auto has_command = require_command(job_); !has_command) {
      return fail(has_command.error());
    }
  }
  if (ask_.dry_run) {
    net::set_name_lookup(net::NameLookup::no_dns);  // a dry run never waits on DNS
  }
  if (!ask_.worker) {
    const MpiChoice choice = resolve_mpi_launch(loaded_);
    mpi_why_ = choice.why;
    job_ = with_mpi_choice(loaded_, choice);
  }
  auto selected = ask_.select ? ask_.select(job_) : select_job_backend(job_);
  if (!selected) {
    return fail(selected.error());
  }
  selected_ = std::move(*selected);
  return {};
}

Result<void> JobRun::find_hosts() {
  auto hosts = find_job_hosts(job_, *selected_);
  if (!hosts) {
    return fail(hosts.error());
  }
  hosts_ = std::move(*hosts);
  return {};
}

Result<void> JobRun::plan_ranks() {
  auto planned = plan_on_hosts(job_, std::move(*selected_), std::move(hosts_));
  selected_.reset();
  if (!planned) {
    return fail(planned.error());
  }
  planned_ = std::move(*planned);
  if (!mpi_why_.empty()) {
    planned_.backend_why += (planned_.backend_why.empty() ? "" : "; ") + mpi_why_;
  }
  return {};
}

// [preflight] / --preflight: the network among the plan's hosts checked
// before any rank starts (not on a dry run, nor for bench's own workers); a
// host or link behind the job's median is left out, stops the job, or is
// warned about ([preflight] on_fail).
Result<void> JobRun::preflight() {
  const PreflightSection& rules = job_.preflight;
  if (rules.in_file && !rules.enabled_said && !ask_.worker) {
    spdlog::warn("[preflight] is not enabled: set enabled = true in it, or pass --preflight");
  }
  if (!rules.enabled || !rules.network || ask_.dry_run || ask_.worker) {
    return {};
  }
  const Inventory hosts =
      hosts_to_check(*planned_.backend, planned_.plan.hosts, job_.launch.np.elastic(), reach_answers_);
  if (hosts.size() < 2) {
    spdlog::info("preflight: {} host, no network to check", hosts.size());
    return {};
  }
  if (hosts.size() == 2) {
    spdlog::warn("preflight: 2 hosts make one pair, the only figure of its median: it is measured, not judged");
  }
  PhaseTimer checking("network check");
  auto outcome = check_network(job_, planned_.backend, hosts);
  checking.end();
  if (!outcome) {
    return fail(outcome.error().code, "preflight: " + outcome.error().message);
  }
  const PreflightOnFail on_fail = preflight_on_fail(rules, job_.launch.np.elastic());
  if (ask_.json) {
    write_event(preflight_event(*outcome, preflight_action(*outcome, on_fail)));
  }
  if (outcome->verdict.findings.empty()) {
    spdlog::info("{}", preflight_summary(*outcome));
    return {};
  }
  spdlog::warn("{}", preflight_summary(*outcome));
  if (ask_.on_preflight) {
    ask_.on_preflight(preflight_left_out(*outcome));
  }
  if (on_fail == PreflightOnFail::stop) {
    return fail(ExitCode::launch, preflight_stop_message(*outcome));
  }
  for (const PreflightFinding& finding : outcome->verdict.findings) {
    spdlog::warn("preflight: {}; {}", finding.why,
                 on_fail == PreflightOnFail::warn ? "launching anyway ([preflight] on_fail = \"warn\")" : "left out");
  }
  return on_fail == PreflightOnFail::exclude ? leave_out(preflight_left_out(*outcome)) : Result<void>{};
}

// The plan again without the hosts the preflight left out.
Result<void> JobRun::leave_out(const std::vector<LeftOutHost>& left_out) {
  Inventory kept;
  std::vector<std::string> names;
  for (const Host& host : planned_.hosts) {
    auto found = std::ranges::find(left_out, host.name, &LeftOutHost::name);
    if (found == left_out.end()) {
      kept.push_back(host);
    } else {
      names.push_back(host.name);
      preflight_left_out_.push_back({host.name, "left out by the preflight"});
    }
  }
  auto plan = make_plan(job_, kept);
  if (!plan) {
    return fail(ExitCode::launch, fmt::format("preflight: cannot start without {}: {}", fmt::join(names, ", "),
                                              plan.error().message));
  }
  planned_.plan = std::move(*plan);
  planned_.hosts = std::move(kept);
  return {};
}

// A personality's checks and edits that need the plan (PRRTE's schizo: it
// is asked, and answers with the job it launches); bench's worker program.
Result<void> JobRun::persona_checks() {
  if (ask_.persona) {
    auto checked = ask_.persona(job_, planned_);
    if (!checked) {
      return fail(checked.error());
    }
    job_ = std::move(*checked);
  }
  if (ask_.worker) {
    job_ = with_program(job_, ask_.worker(*planned_.backend));
  }
  return {};
}

// --mpi pmix: the gang of host workers and the job they run; then the rank
// options checked against the world as launched.
Result<void> JobRun::mpi_mode() {
  if (!ask_.worker) {
    auto pmix = adopt_pmix_launch(job_, planned_);
    if (!pmix) {
      return fail(pmix.error());
    }
    pmix_ = std::move(*pmix);
    if (pmix_.adopted) {
      job_ = std::move(pmix_.job);
      planned_.plan = std::move(pmix_.gang);
    }
  }
  if (pmix_.adopted && !job_.output_ranks.empty()) {
    return fail(ExitCode::usage, "--output-ranks: not available with --mpi pmix (ddl supervises one "
                                 "worker per host there, and each line already names its rank)");
  }
  const int world = planned_.plan.world_size;
  if (job_.stdin_ranks.kind == StdinRanks::Kind::one && job_.stdin_ranks.rank >= world) {
    return fail(ExitCode::usage, fmt::format("--stdin: rank {} is not in this job of {} rank{} (0-{})",
                                             job_.stdin_ranks.rank, world, world == 1 ? "" : "s", world - 1));
  }
  return {};
}

// How rank output is shown and logged (bench: as it is, its stdout is for
// rank 0's results).
Result<void> JobRun::output() {
  if (!ask_.worker) {
    auto output = output_options(job_, planned_.plan, ask_.json);
    if (!output) {
      return fail(output.error());
    }
    output_ = std::move(*output);
  }
  if (pmix_.adopted) {
    output_.host_ranks = pmix_.host_ranks;  // --log-dir: one log per MPI rank
  }
  if (pmix_.adopted && job_.prefix.empty()) {
    std::string problem;
    output_.prefix = *LinePrefix::parse("", problem);  // the worker writes each MPI rank's "[r] "
  }
  output_.on_summary = ask_.on_summary;
  if (ask_.output_fd) {
    output_.stdout_fd = output_.stderr_fd = *ask_.output_fd;
  }
  if (ask_.on_planned) {
    ask_.on_planned(planned_.plan);
  }
  return {};
}

// The restart policy; elastic ([launch] min_np): hosts failing the
// preflight are left out before the first round.
Result<void> JobRun::hosts_left() {
  const int max_restarts = ask_.worker ? 0 : job_.max_restarts;
  launching_ = std::make_unique<Launching>(restart_rules(job_, max_restarts));
  if (!launching_->policy.elastic()) {
    return {};
  }
  if (auto too_many = launching_->policy.exclude_lost(preflight_left_out_)) {
    std::vector<std::string> names;
    for (const LeftOutHost& host : preflight_left_out_) {
      names.push_back(host.name);
    }
    return fail(ExitCode::launch,
                fmt::format("cannot start: the preflight left out {} ({})", fmt::join(names, ", "), *too_many));
  }
  auto plan = elastic_plan(job_, *planned_.backend, planned_.hosts, launching_->policy, reach_answers_);
  if (!plan) {
    return fail(plan.error().code, "cannot start: " + plan.error().message);
  }
  planned_.plan = std::move(*plan);
  return {};
}

// The first round: the error-file folder, then Round::start's steps.
Result<void> JobRun::rounds() {
  Backend& backend = *planned_.backend;
  if (auto made = launching_->error_dir.make(job_, backend); !made) {
    return fail(made.error());
  }
  auto first = Round::start(RoundInputs{job_, backend, launching_->error_dir.path(), {}, {}}, planned_.plan);
  if (!first) {
    return fail(first.error());
  }
  launching_->rounds = std::make_unique<JobRounds>(job_, backend, launching_->error_dir.path(), std::move(*first));
  return {};
}

// The gang supervised to its end, then the backend shut down.
Result<void> JobRun::supervise_gang() {
  Backend& backend = *planned_.backend;
  JobRounds& rounds = *launching_->rounds;
  const Round& first = *rounds.current();
  SupervisorOptions supervisor;
  supervisor.timeout = job_.timeout;
  supervisor.deadline = stop::deadline();
  if (ask_.worker_timeout) {
    const auto bound = std::chrono::steady_clock::now() + *ask_.worker_timeout;
    if (!supervisor.deadline || bound < *supervisor.deadline) {
      supervisor.deadline = bound;
      supervisor.timeout = ask_.worker_timeout;  // what "timed out after" says
    }
  }
  supervisor.max_restarts = ask_.worker ? 0 : job_.max_restarts;
  supervisor.grace = job_.grace;
  supervisor.output = output_;
  supervisor.output.secrets = {first.ctx.token};  // never printed, logged or sent as an event
  supervisor.policy = &launching_->policy;
  supervisor.stop = job_.stop;
  supervisor.hang = job_.watchdog;
  supervisor.job_ending_rank = tf_job_ending_rank(job_, first.plan);
  auto live = ask_.live ? start_live(job_, planned_, output_.host_ranks) : nullptr;
  if (live) {
    attach_live(*live, supervisor);
  }
  auto code = supervise(backend, rounds, supervisor);
  PhaseTimer shutting_down("shut down");
  backend.shutdown();
  shutting_down.end();
  if (live) {
    live->finished(code ? *code : to_int(code.error().code));
  }
  if (ask_.after_ranks && rounds.current() != nullptr) {
    ask_.after_ranks(rounds.current()->rendezvous->server());
  }
  code_ = std::move(code);
  return {};
}

} // namespace ddl::session
