// SPDX-License-Identifier: MIT
#include "src/launch/supervisor.hpp"
#include "src/launch/stdin_feed.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <memory>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/util/duration.hpp"
#include "src/util/file.hpp"
#include "src/util/own_path.hpp"
#include "src/util/phase_timer.hpp"
#include "src/util/rank_list.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/signals.hpp"
#include "src/launch/output_rank_tags.hpp"
#include "src/launch/supervisor_gang.hpp"
#include "src/render/frameworks/mpi.hpp"

namespace ddl {

namespace {

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// After the frozen gang continues, how long the dumps a signal asked for
// (faulthandler's, the dump signal's) may take to start arriving.
constexpr std::chrono::milliseconds k_thaw_settle{1000};

bool is_failure(const RankExit& how) { return how.code != 0 || how.signal != 0 || !how.launch_error.empty(); }

// One attempt: starts every rank and supervises them until all are gone.
class Attempt {
public:
  Attempt(Backend& backend, Output& output, const SupervisorOptions& options, Rounds& rounds, Gang& gang,
          std::optional<SteadyClock::time_point> job_deadline)
      : backend_(backend), output_(output), options_(options), rounds_(rounds), progress_(rounds.progress()),
        gang_(gang), job_deadline_(job_deadline), exited_(gang.launches().size(), false) {}

  void run();

  StopReason reason = StopReason::none;
  int stop_signal = 0;          // for StopReason::signal
  FirstFailure first;
  std::vector<RankFailure> failures;  // every failed rank, in the order seen
  Error launch_error;
  Error watchdog_error;
  std::optional<Hang> hang;          // StopReason::stalled
  std::vector<std::string> hang_notes;
  bool checkpointed = false;         // every rank exited within checkpoint_grace
  SteadyClock::time_point started_at = SteadyClock::now();

private:
  void start_ranks();
  void handle_signals();
  void forward_asked_signals();
  void handle_forwarded();
  void forward(int signo);
  void handle_exits();
  void release_servers(int rank);
  void check_deadlines();
  void check_hang(SteadyClock::time_point now);
  void begin_dump(Hang found);
  void thaw();
  bool dump_settled(SteadyClock::time_point now) const;
  void stop(StopReason why, int signo);
  void stop_with_checkpoint(StopReason why);
  void end_phase(std::optional<SteadyClock::time_point>& phase);
  void signal_running(int signo);
  int timeout_ms() const;
  // "run", or "run (attempt 2)" after a restart.
  std::string phase_name(std::string_view phase) const {
    return gang_.attempt() == 0 ? std::string(phase) : fmt::format("{} (attempt {})", phase, gang_.attempt());
  }

  Backend& backend_;
  Output& output_;
  const SupervisorOptions& options_;
  Rounds& rounds_;
  ProgressBoard* progress_;  // the round's hang board, or nullptr
  Gang& gang_;
  std::optional<SteadyClock::time_point> job_deadline_;
  std::optional<SteadyClock::time_point> kill_deadline_;
  std::optional<SteadyClock::time_point> last_sigint_;
  std::optional<SteadyClock::time_point> checkpoint_deadline_;  // then stop_signal
  std::optional<SteadyClock::time_point> dump_deadline_;        // then stop_signal
  std::vector<bool> dumped_;  // ranks asked for a dump
  bool frozen_ = false;       // stopped (SIGSTOP) for the watchdog's dumps
  SteadyClock::time_point thawed_at_{};
  bool servers_released_ = false;  // job_ending_rank ended well: later ends are no failures
  bool paused_ = false;       // SIGTSTP stopped the ranks; SIGCONT resumes
  std::vector<bool> exited_;
  std::size_t running_ = 0;
};

// Phases (-v): start, run until the gang is told to stop (or ends by
// itself), stop until every rank is gone.
void Attempt::run() {
  {
    PhaseTimer starting(phase_name("start"));
    start_ranks();
  }
  std::optional<PhaseTimer> running;
  std::optional<PhaseTimer> stopping;
  running.emplace(phase_name("run"));
  while (running_ > 0) {
    if (reason != StopReason::none && !stopping) {
      running.reset();
      stopping.emplace(phase_name("stop"));
    }
    const int asked_fd = options_.rank_signals != nullptr ? options_.rank_signals->fd() : -1;
    std::array<pollfd, 4> fds{{{SignalPipe::fd(), POLLIN, 0},
                               {gang_.wake_fd(), POLLIN, 0},
                               {ForwardedSignals::fd(), POLLIN, 0},
                               {asked_fd, POLLIN, 0}}};
    int ready = ::poll(fds.data(), fds.size(), timeout_ms());
    if (ready < 0 && errno != EINTR) {
      break;
    }
    handle_signals();
    forward_asked_signals();
    handle_forwarded();
    if (output_.stdout_closed() && reason != StopReason::stdout_closed && reason != StopReason::signal) {
      stop(StopReason::stdout_closed, SIGTERM);
    }
    handle_exits();
    check_deadlines();
  }
  if (reason != StopReason::none && !stopping) {
    running.reset();
    stopping.emplace(phase_name("stop"));
  }
}

// The gang as a whole; the ranks it did not start count as gone. Ctrl-C or
// the deadline before a rank stops the attempt as it would later; a rank
// that cannot start is a launch error.
void Attempt::start_ranks() {
  GangStart start = backend_.start(gang_.launches(), gang_);
  start_stdin();  // once every rank that reads it is attached: --stdin all gives each the same bytes
  running_ = start.started;
  for (std::size_t rank = start.started; rank < exited_.size(); ++rank) {
    exited_[rank] = true;
  }
  if (!start.error) {
    return;
  }
  if (stop::is_stop_error(*start.error)) {
    handle_signals();
    check_deadlines();
  }
  if (reason == StopReason::none) {
    launch_error = *start.error;
    stop(StopReason::launch_error, SIGTERM);
  }
}

void Attempt::handle_signals() {
  for (int signo : SignalPipe::take()) {
    auto now = SteadyClock::now();
    if (signo == SIGINT && last_sigint_ && now - *last_sigint_ < std::chrono::seconds(1)) {
      signal_running(SIGKILL);
      kill_deadline_.reset();
    } else if (reason == StopReason::signal) {
      signal_running(signo);  // forward again; the first one's grace still runs
    } else {
      reason = StopReason::none;  // a signal outranks any earlier reason
      dump_deadline_.reset();
      thaw();
      if (signo == SIGTERM) {
        stop_with_checkpoint(StopReason::signal);
      } else {
        stop(StopReason::signal, signo);
      }
      stop_signal = signo;
    }
    if (signo == SIGINT) {
      last_sigint_ = now;
    }
  }
}

// `ddl signal JOB SIG` for a signal that does not stop ddl: as if ddl got it.
void Attempt::forward_asked_signals() {
  if (options_.rank_signals != nullptr) {
    for (int signo : options_.rank_signals->take()) {
      forward(signo);
    }
  }
}

void Attempt::handle_forwarded() {
  for (int signo : ForwardedSignals::take()) {
    forward(signo);
  }
}

// SIGUSR1, SIGUSR2 and SIGCONT go to every rank as they are; SIGTSTP
// becomes SIGSTOP (a program cannot ignore it), as mpirun does. While the
// ranks are stopped the watchdog waits; SIGCONT counts as everyone's progress.
void Attempt::forward(int signo) {
  signal_running(signo == SIGTSTP ? SIGSTOP : signo);
  if (signo == SIGTSTP) {
    paused_ = true;
  } else if (signo == SIGCONT) {
    paused_ = false;
    if (progress_ != nullptr) {
      progress_->touch_all();
    }
  }
}

void Attempt::handle_exits() {
  for (auto& [rank, how] : gang_.take_exits()) {
    auto index = static_cast<std::size_t>(rank);
    if (index >= exited_.size() || exited_[index]) {
      continue;
    }
    exited_[index] = true;
    --running_;
    if (dump_deadline_ && options_.hang.dump_signal != 0 && how.signal == options_.hang.dump_signal) {
      hang_notes.push_back(dump_signal_death(rank, gang_.launches()[index].host.name, options_.hang.dump_signal));
    }
    if (servers_released_) {
      continue;
    }
    if (rank == options_.job_ending_rank && reason == StopReason::none && !is_failure(how)) {
      release_servers(rank);
      continue;
    }
    if (is_failure(how)) {
      failures.push_back({rank, gang_.launches()[index].host.name, how});
    }
    if (is_failure(how) && first.rank < 0) {
      first = FirstFailure{rank, how, seconds_since(started_at)};
      if (reason == StopReason::none) {
        stop(StopReason::failed, options_.stop.stop_signal);
      }
    }
  }
  if (running_ == 0 && checkpoint_deadline_) {
    checkpointed = true;  // all gone before the stop signal was needed
  }
}

// The chief ended well ([tensorflow] success = "chief"): the job is done, and
// the servers still running (ps, ParameterServerStrategy's workers) are
// stopped as the stop of a job is (stop signal, grace, KILL), not as failures.
void Attempt::release_servers(int rank) {
  servers_released_ = true;
  if (running_ == 0) {
    return;
  }
  output_.message(fmt::format("ddl: rank {} (the TensorFlow chief) ended; stopping the {} rank(s) still serving", rank,
                              running_));
  signal_running(options_.stop.stop_signal);
  kill_deadline_ = SteadyClock::now() + options_.grace;
}

void Attempt::check_deadlines() {
  auto now = SteadyClock::now();
  if (job_deadline_ && now >= *job_deadline_ && reason != StopReason::timeout) {
    job_deadline_.reset();
    stop_with_checkpoint(StopReason::timeout);  // a failure already stopping wins
  }
  if (reason == StopReason::none) {
    if (auto problem = rounds_.overdue()) {
      watchdog_error = std::move(*problem);
      stop(StopReason::watchdog, options_.stop.stop_signal);
    }
  }
  check_hang(now);
  if (checkpoint_deadline_ && now >= *checkpoint_deadline_) {
    end_phase(checkpoint_deadline_);
  }
  if (dump_deadline_ && frozen_ && (now >= *dump_deadline_ || dump_settled(now))) {
    thaw();
  }
  if (dump_deadline_ && !frozen_ && (now >= *dump_deadline_ || dump_settled(now))) {
    end_phase(dump_deadline_);
  }
  if (kill_deadline_ && now >= *kill_deadline_) {
    signal_running(SIGKILL);
    kill_deadline_.reset();
  }
}

void Attempt::check_hang(SteadyClock::time_point now) {
  if (progress_ == nullptr || reason != StopReason::none || paused_) {
    return;
  }
  const ProgressBoard& board = *progress_;  // its ranks: the gang's, or the MPI ranks under --mpi pmix
  const auto watched = static_cast<std::size_t>(board.world_size());
  std::vector<SteadyClock::time_point> last(watched);
  std::vector<bool> running(watched);
  for (std::size_t rank = 0; rank < watched; ++rank) {
    last[rank] = board.last_progress(static_cast<int>(rank));
    const auto gang = static_cast<std::size_t>(board.gang_rank(static_cast<int>(rank)));
    running[rank] = gang < exited_.size() && !exited_[gang];
  }
  if (auto found = find_hang(options_.hang, last, running, now)) {
    begin_dump(std::move(*found));
  }
}

// The hang's first step: the gang is frozen (SIGSTOP) so that every rank's
// evidence is of one instant, and every running rank is asked for its
// stacks. A dumper (gdb, py-spy) reads a stopped rank as it is; a signal
// (the dump signal, faulthandler's SIGABRT) waits in the stopped ranks, and
// each takes it as it resumes, before it can see a peer end: the gang is
// continued once the dumpers have told what they saw (thaw), or at once for
// the dump signal. What the ranks print until the dump settles (or
// dump_timeout) is the evidence; then the stop signal ends them.
void Attempt::begin_dump(Hang found) {
  reason = StopReason::stalled;
  const bool tool = options_.hang.dump_signal == 0;
  output_.message(hang_announcement(options_.hang, found, dump_how(options_.hang)));
  progress_->start_evidence();
  dumped_.assign(exited_.size(), false);
  signal_running(SIGSTOP);
  frozen_ = true;
  if (!tool) {
    signal_running(options_.hang.dump_signal);
    thaw();
  }
  std::vector<int> undumpable;
  for (std::size_t rank = 0; rank < exited_.size(); ++rank) {
    if (exited_[rank]) {
      continue;
    }
    if (!tool) {
      dumped_[rank] = true;
    } else if (backend_.dump_stacks(static_cast<int>(rank), options_.hang.dump_tool, options_.hang.dump_timeout)) {
      dumped_[rank] = true;
    } else {
      undumpable.push_back(static_cast<int>(rank));
    }
  }
  if (!undumpable.empty()) {
    hang_notes.push_back(fmt::format("the {} backend cannot run a stack dumper for ranks {}; set watchdog.dump to a "
                                     "signal the program answers with its stacks (e.g. \"SIGUSR1\" with "
                                     "faulthandler.register)",
                                     backend_.name(), compress_ranks(undumpable)));
  }
  hang = std::move(found);
  dump_deadline_ = SteadyClock::now() + options_.hang.dump_timeout;
}

// The frozen gang continues (SIGCONT): the dump signals it holds land now.
void Attempt::thaw() {
  if (frozen_) {
    frozen_ = false;
    signal_running(SIGCONT);
    thawed_at_ = SteadyClock::now();
  }
}

// Every rank asked has printed something and nothing came for 500 ms (nor
// in the first second after the gang was continued: the dumps that a
// signal asked for come then).
bool Attempt::dump_settled(SteadyClock::time_point now) const {
  auto last = progress_->last_evidence();
  if (!last || now - *last < std::chrono::milliseconds(500)) {
    return false;
  }
  if (!frozen_ && now - thawed_at_ < k_thaw_settle) {
    return false;
  }
  auto has = progress_->gang_has_evidence();
  for (std::size_t rank = 0; rank < dumped_.size(); ++rank) {
    if (dumped_[rank] && !exited_[rank] && !has[rank]) {
      return false;
    }
  }
  return true;
}

// The checkpoint grace or the dump is over: the stop signal, then KILL after grace.
void Attempt::end_phase(std::optional<SteadyClock::time_point>& phase) {
  phase.reset();
  thaw();
  output_.stop_waiting();
  signal_running(options_.stop.stop_signal);
  kill_deadline_ = SteadyClock::now() + options_.grace;
}

// SIGTERM to ddl and the timeout: with job.checkpoint_signal, that first and
// checkpoint_grace for the ranks to exit on their own; else the stop signal.
void Attempt::stop_with_checkpoint(StopReason why) {
  const int checkpoint = options_.stop.checkpoint_signal;
  if (checkpoint == 0 || reason != StopReason::none) {
    stop(why, options_.stop.stop_signal);
    return;
  }
  reason = why;
  signal_running(checkpoint);
  checkpoint_deadline_ = SteadyClock::now() + options_.stop.checkpoint_grace;
  output_.message(fmt::format("ddl: sent {} (job.checkpoint_signal) to every rank; {} follows in {} unless they "
                              "exit\n",
                              signal_name(checkpoint), signal_name(options_.stop.stop_signal),
                              format_duration(options_.stop.checkpoint_grace)));
}

void Attempt::stop(StopReason why, int signo) {
  if (reason != StopReason::none) {
    return;
  }
  reason = why;
  if (options_.on_state) {
    options_.on_state("stopping", gang_.attempt());
  }
  output_.stop_waiting();  // a stuck reader of ddl's stdout must not hold the stop up
  signal_running(signo);
  kill_deadline_ = SteadyClock::now() + options_.grace;
}

// Forwards `signo` to every rank still running, once: the one path of
// every signal to the ranks (ddl's own SIGINT/SIGTERM/SIGHUP, `ddl signal`,
// stops, the watchdog's dump signal).
void Attempt::signal_running(int signo) {
  if (running_ > 0) {
    backend_.signal_all(signo);
  }
}

int Attempt::timeout_ms() const {
  std::optional<SteadyClock::time_point> next = kill_deadline_;
  for (const auto& at : {job_deadline_, checkpoint_deadline_, dump_deadline_}) {
    if (at && (!next || *at < *next)) {
      next = at;
    }
  }
  // The rounds' overdue() is asked while the gang runs, the hang board also
  // while the stacks are dumped.
  if (reason == StopReason::none || (progress_ != nullptr && dump_deadline_)) {
    auto poll_at = SteadyClock::now() + std::chrono::milliseconds(100);
    if (!next || poll_at < *next) {
      next = poll_at;
    }
  }
  if (!next) {
    return -1;
  }
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

// The failed rank's torch error file (TORCHELASTIC_ERROR_FILE), when it
// wrote one in this attempt and the backend can read it.
std::optional<RankError> read_rank_error(Backend& backend, const RankLaunch& launch,
                                         std::chrono::system_clock::time_point since) {
  for (const auto& [name, path] : launch.env) {
    if (name == "TORCHELASTIC_ERROR_FILE" && !path.empty()) {
      if (auto text = backend.read_rank_file(launch, path, since, k_error_file_max_bytes)) {
        return parse_torch_error_file(*text);
      }
    }
  }
  return std::nullopt;
}

// The first failure as the user knows it: under --mpi pmix the MPI rank
// that its host's worker blamed, with that rank's own lines; else the gang's.
struct NamedFailure {
  RankLaunch launch;
  FirstFailure first;
  std::deque<std::string> stderr_tail;
};

NamedFailure named_failure(const Output& output, const Gang& gang, const FirstFailure& first) {
  NamedFailure named{gang.launches().at(static_cast<std::size_t>(first.rank)), first,
                     gang.stderr_tail(first.rank).lines()};
  if (auto mpi_rank = output.blamed_mpi_rank(first.rank)) {
    named.launch.rank = *mpi_rank;
    named.first.rank = *mpi_rank;
    auto own = RankTagRouter::lines_of(*mpi_rank, named.stderr_tail);
    named.stderr_tail.assign(own.begin(), own.end());
  }
  return named;
}

// What ddl prints when the job ends: the failure summary (`named`: the
// first failure as the user knows it, where a rank ended first), or the
// timeout.
void report_end(Output& output, const Gang& gang, const AttemptEnd& end, const std::optional<NamedFailure>& named,
                int attempts, const SupervisorOptions& options) {
  if (end.reason == StopReason::failed && named) {
    output.message(failure_summary(named->launch, named->first, named->stderr_tail, attempts, end.rank_error));
    if (gang.refused_as_singleton(end.first.rank)) {
      output.message(singleton_guard_hint(end.first.rank, static_cast<int>(gang.launches().size())) + "\n");
    }
  } else if (end.reason == StopReason::timeout) {
    output.message(timeout_message(options.timeout));
  } else if (end.reason == StopReason::signal) {
    output.message(interrupted_message(end.stop_signal, static_cast<int>(gang.launches().size())));
  }
  if (end.requeue_exit_code && named && end.first.how.signal == 0 && end.first.how.code == *end.requeue_exit_code) {
    output.message(fmt::format("ddl: rank {} asked to be requeued (exit code {} = job.requeue_exit_code); ddl "
                               "exits {} for the scheduler to requeue the job\n",
                               named->first.rank, end.first.how.code, end.first.how.code));
  }
  if (end.checkpointed) {
    output.message(fmt::format("ddl: every rank exited within job.checkpoint_grace ({}) after {}\n",
                               format_duration(options.stop.checkpoint_grace),
                               signal_name(options.stop.checkpoint_signal)));
  }
}

// A rank that exited with job.requeue_exit_code: no restart here, the
// scheduler requeues the job.
bool asks_requeue(const FirstFailure& first, const SupervisorOptions& options) {
  return options.stop.requeue_exit_code && first.rank >= 0 && first.how.signal == 0 &&
         first.how.launch_error.empty() && first.how.code == *options.stop.requeue_exit_code;
}

// The hang's report on stderr, and in --log-dir as watchdog.attempt-A.log.
void report_hang(Output& output, const Attempt& run, const Gang& gang, const ProgressBoard& board,
                 const SupervisorOptions& options) {
  std::string text = hang_report(*run.hang, board, gang.launches(), run.hang_notes);
  output.message(text);
  if (!options.output.log_dir.empty()) {
    std::string path = fmt::format("{}/watchdog.attempt-{}.log", options.output.log_dir, gang.attempt());
    auto opened = open_own_file(path, O_WRONLY | O_CREAT | O_TRUNC, "log file");
    const int fd = opened ? *opened : -1;
    if (!opened) {
      output.message(fmt::format("ddl: {}\n", opened.error().message));
    } else if (!write_fully(fd, text)) {
      output.message(fmt::format("ddl: cannot write {}: {}\n", path, std::strerror(errno)));
    }
    if (fd >= 0) {
      ::close(fd);
    }
  }
}

// What the restart policy weighs: the failed ranks, or for a stall the first
// stalled rank as if it had exited with the stall's code (so restart_on and
// fail_on may name it).
std::vector<RankFailure> attempt_failures(const Attempt& run, const Gang& gang, const ProgressBoard* board) {
  if (run.reason != StopReason::stalled || !run.failures.empty()) {
    return run.failures;
  }
  const int rank = run.hang && !run.hang->ranks.empty() ? run.hang->ranks.front() : 0;
  const int host = board != nullptr ? board->gang_rank(rank) : rank;  // an MPI rank's host under --mpi pmix
  const RankLaunch& launch = gang.launches().at(static_cast<std::size_t>(host));
  return {RankFailure{rank, launch.host.name, RankExit{to_int(ExitCode::stalled)}}};
}

// "restarting on the hosts left" only when a host was left out now and
// some host of the attempt is still in.
std::string restart_text(const Output& output, const Attempt& run, const Gang& gang, const RestartDecision& decision,
                         int next_attempt, int max_restarts, bool hosts_left) {
  if (run.reason == StopReason::stalled) {
    return fmt::format("ddl: the attempt stalled; restarting (DDL_ATTEMPT={}){}\n", next_attempt,
                       decision.lost.empty() || !hosts_left ? "" : " on the hosts left");
  }
  const NamedFailure named = named_failure(output, gang, run.first);
  return decision.lost.empty()
             ? restart_message(named.launch, named.first, next_attempt, max_restarts)
             : elastic_restart_message(named.launch, named.first, next_attempt, decision.wait, hosts_left);
}

// Whether a host of `plan` is not excluded.
bool hosts_left(const Plan& plan, const RestartPolicy& policy) {
  return std::ranges::any_of(plan.hosts, [&](const Host& host) { return !policy.is_excluded(host.name); });
}

// Each rank's host and local rank, for prefixes and --fold headers.
std::vector<RankLabel> rank_labels(const Plan& plan) {
  std::vector<RankLabel> labels;
  for (const RankSlot& slot : plan.ranks) {
    labels.push_back({plan.hosts.at(slot.host_index).name, slot.local_rank});
  }
  return labels;
}

OutputOptions with_labels(OutputOptions options, const Plan& plan) {
  options.labels = rank_labels(plan);
  return options;
}

// Waits `wait` before the next attempt; a signal to ddl cuts it short and
// is returned.
std::optional<int> wait_for_restart(Millis wait) {
  const auto until = SteadyClock::now() + wait;
  while (SteadyClock::now() < until) {
    pollfd fd{SignalPipe::fd(), POLLIN, 0};
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - SteadyClock::now()).count();
    ::poll(&fd, 1, static_cast<int>(std::clamp<long long>(left, 0, 60'000)));
    if (auto pending = SignalPipe::take(); !pending.empty()) {
      return pending.front();
    }
  }
  return std::nullopt;
}

// The job across its attempts: what the attempt loop, the restart decision
// and the summary share.
struct JobRun {
  Backend& backend;
  Rounds& rounds;
  const SupervisorOptions& options;
  RestartPolicy& policy;
  Output& output;
  std::vector<RankLaunch> launches;  // the next attempt's
  SteadyClock::time_point started;
  std::optional<SteadyClock::time_point> deadline;
  std::size_t announced;  // excluded hosts already named

  // Names the hosts the policy left out since the last call.
  void announce_excluded(int attempt) {
    for (; announced < policy.excluded().size(); ++announced) {
      output.host_excluded(policy.excluded()[announced], attempt);
    }
  }
};

// Attempt 0's launches, and the backend prepared for them (it checks what
// they run on every host).
Result<std::vector<RankLaunch>> prepare_first(Backend& backend, Rounds& rounds) {
  auto launches = rounds.launches(0);
  if (!launches) {
    return fail(launches.error());
  }
  if (stop::requested()) {
    return fail(stop::error("preparing the launch"));
  }
  PhaseTimer preflight("preflight");
  if (auto prepared = backend.prepare(rounds.plan(), *launches); !prepared) {
    bool stopped = stop::requested() && !stop::is_stop_error(prepared.error());
    return fail(stopped ? stop::error("preparing the hosts") : prepared.error());
  }
  return launches;
}

// Elastic: when prepare() could not reach some hosts (lost between their
// preflight and the start), attempt 0 on the hosts left, planned again as
// after a lost host. Else `error`, prepare()'s own.
Result<NextRound> start_on_hosts_left(Backend& backend, Rounds& rounds, RestartPolicy& policy, Error error) {
  std::vector<LeftOutHost> unreached = backend.unreached_hosts();
  if (!policy.elastic() || unreached.empty() || stop::is_stop_error(error)) {
    return fail(std::move(error));
  }
  backend.shutdown();
  if (auto why = policy.exclude_lost(unreached)) {
    return fail(ExitCode::launch, "cannot start: " + *why);
  }
  auto next = rounds.next_round(0, policy);
  if (!next) {
    return fail(next.error());
  }
  if (!next->not_enough.empty()) {
    return fail(ExitCode::launch, "cannot start: " + next->not_enough);
  }
  return next;
}

// How an attempt ended, with the failed rank's host and torch error file.
AttemptEnd attempt_end(const JobRun& job, const Attempt& run, const Gang& gang,
                       std::chrono::system_clock::time_point attempt_start) {
  AttemptEnd end{run.reason, run.stop_signal, run.first, "", {}, {}, job.options.stop.requeue_exit_code,
                 run.checkpointed};
  if (run.first.rank >= 0) {
    const RankLaunch& failed = gang.launches().at(static_cast<std::size_t>(run.first.rank));
    end.failed_host = failed.host.name;
    if (run.reason == StopReason::failed) {
      end.rank_error = read_rank_error(job.backend, failed, attempt_start);
    }
  }
  return end;
}

// After an attempt: run another (`again`, its launches in job.launches), or
// end the job, saying why a failure was not restarted.
struct Restart {
  bool again = false;
  std::string not_restarted;
};

// A restart on the hosts left (elastic): the backend ends what it holds,
// the job is planned again and the backend prepared for it.
Result<Restart> replan(JobRun& job, int next_attempt) {
  job.backend.shutdown();
  auto next = job.rounds.next_round(next_attempt, job.policy);
  job.announce_excluded(next_attempt);
  if (!next) {
    return fail(next.error());
  }
  if (!next->not_enough.empty()) {
    return Restart{false, next->not_enough};
  }
  job.output.set_labels(rank_labels(job.rounds.plan()));
  job.launches = std::move(next->launches);
  return Restart{true, {}};
}

// The restart decision after a failed or stalled attempt: the restart
// policy's verdict (restart, re-plan, stop), its backoff, and a signal to
// ddl in between, which ends the job (`end` then says so).
Result<Restart> decide_restart(JobRun& job, const Attempt& run, const Gang& gang, AttemptEnd& end) {
  const bool restartable = (run.reason == StopReason::failed && !asks_requeue(run.first, job.options)) ||
                           run.reason == StopReason::stalled;
  if (!restartable) {
    return Restart{};
  }
  const int next_attempt = gang.attempt() + 1;
  if (auto pending = SignalPipe::take(); !pending.empty()) {
    end.reason = StopReason::signal;  // interrupted while the gang stopped
    end.stop_signal = pending.front();
    return Restart{};
  }
  RestartDecision decision = job.policy.after_failure(attempt_failures(run, gang, job.rounds.progress()));
  job.announce_excluded(next_attempt);
  if (decision.verdict == Verdict::stop) {
    return Restart{false, decision.why};
  }
  job.output.message(
      restart_text(job.output, run, gang, decision, next_attempt, job.options.max_restarts,
                   hosts_left(job.rounds.plan(), job.policy)));
  job.output.restarting(next_attempt, job.options.max_restarts);
  if (auto interrupted = wait_for_restart(decision.wait)) {
    end.reason = StopReason::signal;
    end.stop_signal = *interrupted;
    return Restart{false, decision.why};
  }
  if (decision.verdict == Verdict::replan) {
    return replan(job, next_attempt);
  }
  auto launches = job.rounds.launches(next_attempt);
  if (!launches) {
    return fail(launches.error());
  }
  job.launches = std::move(*launches);
  return Restart{true, {}};
}

// The summary: what ended the job, the report on stderr, the summary event
// and the exit code (or ddl's own error: launch, watchdog).
Result<int> summarize(JobRun& job, const Attempt& run, const Gang& gang, AttemptEnd end,
                      const std::string& not_restarted) {
  const SupervisorOptions& options = job.options;
  const int attempts = gang.attempt() + 1;
  if (!not_restarted.empty()) {
    job.output.message(fmt::format("ddl: not restarted: {}\n", not_restarted));
  }
  end.error = run.reason == StopReason::watchdog ? run.watchdog_error : run.launch_error;
  std::optional<NamedFailure> named;
  if (end.first.rank >= 0 && static_cast<std::size_t>(end.first.rank) < gang.launches().size()) {
    named = named_failure(job.output, gang, end.first);
  }
  report_end(job.output, gang, end, named, attempts, options);
  JobSummary summary = job_summary(end, attempts, seconds_since(job.started));
  if (named && summary.failed_rank >= 0) {
    summary.failed_rank = named->first.rank;
  }
  if (end.reason == StopReason::stalled && run.hang) {
    summary.stalled_ranks = run.hang->ranks;
    if (const ProgressBoard* board = job.rounds.progress()) {
      summary.stall_groups = stall_groups(*run.hang, *board, gang.launches());
    }
  }
  summary.dropped_lines = job.output.dropped_lines();
  summary.log_error = job.output.log_error();
  summary.excluded_hosts = job.policy.excluded();
  if (options.output.strict_logs && !summary.log_error.empty() && summary.exit_code == 0) {
    summary.exit_code = static_cast<int>(ExitCode::launch);
    summary.result = "log_error";
  }
  job.output.summary(summary);
  if (end.reason == StopReason::launch_error || end.reason == StopReason::watchdog) {
    return fail(end.error);
  }
  return summary.exit_code;
}

// ddl's own signals on pipes of their own: none from before the gang exists.
Result<void> install_signal_pipes() {
  if (auto installed = SignalPipe::install(); !installed) {
    return fail(installed.error());
  }
  if (auto installed = ForwardedSignals::install(); !installed) {
    return fail(installed.error());
  }
  ForwardedSignals::take();
  return {};
}

// Attempt 0's launches with the backend prepared, on the hosts left when
// some could not be reached (elastic).
Result<std::vector<RankLaunch>> first_launches(Backend& backend, Rounds& rounds, RestartPolicy& policy) {
  auto launches = prepare_first(backend, rounds);
  if (launches) {
    return launches;
  }
  auto next = start_on_hosts_left(backend, rounds, policy, launches.error());
  if (!next) {
    return fail(next.error());
  }
  return std::move(next->launches);
}

} // namespace

Result<int> supervise(Backend& backend, Rounds& rounds, const SupervisorOptions& options) {
  if (auto installed = install_signal_pipes(); !installed) {
    return fail(installed.error());
  }
  RestartPolicy fallback(RestartRules{.max_restarts = options.max_restarts});
  RestartPolicy& policy = options.policy != nullptr ? *options.policy : fallback;
  auto launches = first_launches(backend, rounds, policy);
  if (!launches) {
    return fail(launches.error());
  }
  Output output(with_labels(options.output, rounds.plan()));
  const auto started = SteadyClock::now();
  std::optional<SteadyClock::time_point> deadline = options.deadline;
  if (options.timeout && !deadline) {
    deadline = started + *options.timeout;
  }
  JobRun job{backend, rounds, options, policy, output, std::move(*launches), started, deadline, 0};
  job.announce_excluded(0);
  // The attempt loop: each attempt starts the gang and supervises it until
  // every rank is gone; after a failure the restart decision says whether
  // another follows.
  for (int attempt = 0;; ++attempt) {
    if (auto opened = output.begin_attempt(attempt, rounds.plan().world_size); !opened) {
      return fail(opened.error());
    }
    const auto attempt_start = std::chrono::system_clock::now();
    ProgressBoard* board = rounds.progress();  // the round's: a new round brings its own
    if (board != nullptr) {
      board->watch_mpi_ranks(options.output.host_ranks);  // --mpi pmix: the MPI ranks, not their hosts
      board->begin_attempt();
    }
    Gang gang(output, std::move(job.launches), attempt, board);
    output.on_stdout_closed([&gang] { gang.wake(); });
    Attempt run(backend, output, options, rounds, gang, job.deadline);
    if (options.on_state) {
      options.on_state("running", attempt);
    }
    run.run();
    output.on_stdout_closed({});
    output.end_attempt();
    AttemptEnd end = attempt_end(job, run, gang, attempt_start);
    if (run.reason == StopReason::stalled) {
      report_hang(output, run, gang, *board, options);
    }
    auto restart = decide_restart(job, run, gang, end);
    if (!restart) {
      return fail(restart.error());
    }
    if (!restart->again) {
      return summarize(job, run, gang, std::move(end), restart->not_restarted);
    }
  }
}

} // namespace ddl
