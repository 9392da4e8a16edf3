// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <map>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/launch/error_file.hpp"
#include "src/launch/output_fold.hpp"
#include "src/launch/output_lines.hpp"
#include "src/launch/output_rank_tags.hpp"
#include "src/launch/output_writer.hpp"
#include "src/launch/watchdog_suspects.hpp"
#include "src/plan/placement.hpp"
#include "src/util/error.hpp"
#include "src/util/line_prefix.hpp"
#include "src/util/rank_list.hpp"

namespace ddl {

// Where a rank runs, for prefixes and --fold headers.
struct RankLabel {
  std::string host;
  int local_rank = 0;
};

// Receives every rank line as ddl has it (redacted), whatever is shown:
// what `ddl logs` serves. Called from the threads that deliver output.
using LineTap = std::function<void(int rank, Stream stream, std::string_view text, LineEnd end)>;

struct JobSummary;

struct OutputOptions {
  bool json = false;        // JSON Lines events on stdout instead of tagged text
  std::string log_dir;      // also one file per rank and attempt when set
  bool strict_logs = false;  // a log write that fails makes ddl exit 3 (else a warning)
  bool split_logs = false;   // DIR/rank-R.attempt-A.stdout.log and .stderr.log instead of one .log
  LinePrefix prefix = LinePrefix::standard();  // before each rank line on ddl's stdout/stderr
  bool timestamps = false;   // ISO 8601 UTC time before each rank line shown (log files keep the bytes)
  RankList output_ranks;     // only these ranks on ddl's stdout/stderr (and events); empty: all
  bool fold = false;         // FoldBuffer: identical whole outputs once, at each attempt's end
  std::vector<RankLabel> labels;  // per rank; the supervisor fills it from the plan
  // --mpi pmix: each rank is a host whose lines start "[R] " for MPI rank R;
  // its entry is that host's MPI rank count, and the logs are one per MPI
  // rank (RankTagRouter). Empty: one log per rank.
  std::vector<int> host_ranks;
  LineTap tap;  // each line as its rank's (under --mpi pmix: its MPI rank's, without the tag)
  // Told the job's summary as it is reported (a sweep's trial writes it to
  // its result.json).
  std::function<void(const JobSummary&)> on_summary;
  int stdout_fd = 1;
  int stderr_fd = 2;
  // Replaced by "[redacted]" in rank output that ddl prints, logs and sends
  // as events (the job token).
  std::vector<std::string> secrets;
  // Rank output waiting for ddl's stdout/stderr to take it (see StreamWriter).
  std::size_t max_pending_bytes = std::size_t{4} << 20;
};

// What ends a job, for the summary event.
struct JobSummary {
  int exit_code = 0;
  std::string result;       // ok | failed | timeout | interrupted | launch_error | rendezvous_timeout
                            // | stalled | requeue
  int attempts = 1;
  double elapsed_s = 0;
  int failed_rank = -1;     // first failing rank, -1 when none
  std::string host;         // its host
  RankExit how;             // how it ended
  std::optional<RankError> rank_error;  // its torch error file, when it wrote one
  std::size_t dropped_lines = 0;  // rank output lines ddl could not print
  std::string log_error;    // why the rank logs are incomplete, "" when they are not
  std::vector<LeftOutHost> excluded_hosts;  // elastic: hosts left out, and why
  bool checkpointed = false;  // stopped, and every rank exited within checkpoint_grace
  std::vector<int> stalled_ranks;  // result stalled: the ranks the watchdog named
  std::vector<StallGroup> stall_groups;  // and how they compare (suspects first)
};

// The sinks of a run: tagged lines ("[RANK] line") on ddl's stdout/stderr
// (each rank stream to the same stream of ddl), or JSON Lines events; plus
// per-rank log files. Thread-safe; every line is one write, so lines never
// mix. A piece cut at k_max_line_bytes is tagged "[RANK+] " (JSON:
// "partial": true); on a terminal a '\r' progress update passes through.
// ddl's stdout and stderr are written by a StreamWriter, so a reader that
// stops reading never blocks the supervisor.
class Output {
public:
  explicit Output(OutputOptions options);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  // Opens DIR/rank-R.attempt-A.log for every rank (creating DIR); under
  // host_ranks for every MPI rank instead.
  Result<void> begin_attempt(int attempt, int world_size);
  // A re-planned gang (an elastic restart on fewer hosts): the ranks' hosts
  // and local ranks for prefixes and --fold headers. Between attempts only.
  void set_labels(std::vector<RankLabel> labels) { options_.labels = std::move(labels); }
  void end_attempt();

  void started(int rank, std::string_view host, long pid, int attempt);
  // Returns the line as ddl has it (redacted; a piece cut at the line cap
  // may hold back the start of a secret for the next piece): what the
  // failure summary and the watchdog keep of it.
  std::string line(int rank, Stream stream, std::string_view text, LineEnd end = LineEnd::newline);
  void exited(int rank, const RankExit& how);
  void restarting(int attempt, int max_restarts);
  // Elastic: `host` is left out from now on ("host_excluded" event, else a
  // line on stderr).
  void host_excluded(const LeftOutHost& host, int attempt);
  void summary(const JobSummary& summary);
  // A message of ddl itself on stderr (already formatted, with its newline);
  // any secret in it (rank text it quotes) is redacted.
  void message(std::string_view text);

  // True once a write to stdout failed with EPIPE (the reader went away).
  bool stdout_closed() const { return writer_.stdout_closed(); }
  // Called once, from the writing thread, when stdout first closes.
  void on_stdout_closed(std::function<void()> callback);
  // The job is stopping: rank output no longer waits for a slow stdout
  // (lines that find the queue full are dropped and counted).
  void stop_waiting();
  // Whether '\r' progress updates pass through (text on a terminal).
  bool passes_carriage_returns() const;
  std::size_t dropped_lines() const { return writer_.dropped(); }
  // --mpi pmix: the MPI rank whose failure rank (host) `rank`'s worker
  // reported, once it has; nullopt otherwise.
  std::optional<int> blamed_mpi_rank(int rank) const;
  // Why the rank logs are incomplete (the first failed write); "" if they are not.
  std::string log_error() const;

private:
  void write_out(std::string text, bool may_wait = false);
  void write_err(std::string text, bool may_wait = false);
  void write_log(int rank, Stream stream, std::string_view text, std::string_view end);
  Result<void> open_logs(int attempt, int world_size);
  void close_logs();
  void print_line(int rank, Stream stream, const std::string& text, LineEnd end);
  bool shows(int rank) const { return options_.output_ranks.empty() || options_.output_ranks.contains(rank); }
  std::string prefix_of(int rank, bool partial) const;

  OutputOptions options_;
  StreamWriter writer_;
  mutable std::mutex mutex_;
  int attempt_ = 0;
  // Per rank: the log file of stdout and of stderr (the same one unless split_logs).
  std::vector<std::array<int, 2>> log_fds_;
  std::vector<std::array<std::string, 2>> log_paths_;
  RankTagRouter tags_;
  FoldBuffer fold_;
  bool fold_pending_ = false;
  std::string log_error_;
  bool stopping_ = false;
  // Per rank and stream: the end of a partial piece that may begin a secret,
  // held for the next piece so that a cut at the line cap never shows it.
  std::map<std::pair<int, Stream>, std::string> held_;
};

// `text` with every secret replaced by "[redacted]".
std::string redact(std::string_view text, const std::vector<std::string>& secrets);
// The length of the longest end of `text` that is the start (not the whole)
// of a secret: what a piece cut at the line cap must hold back.
std::size_t secret_start_at_end(std::string_view text, const std::vector<std::string>& secrets);

// "exit code 3" or "SIGKILL".
std::string describe_exit(const RankExit& how);

} // namespace ddl
