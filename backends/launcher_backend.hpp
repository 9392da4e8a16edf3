// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "backends/launcher_command.hpp"
#include "src/launch/backend.hpp"

namespace ddl {

// A rank's end that the launcher's output tells.
struct Blame {
  int rank = -1;
  RankExit how;
};

// Reads a launcher's stdout and stderr: gives each rank's bytes to the sink,
// takes out the rank script's markers and keeps the launcher's own text.
// One per gang, fed on the launcher's runner thread.
class LauncherOutput {
public:
  using Sink = std::function<void(int rank, Stream stream, std::string_view bytes)>;
  explicit LauncherOutput(Sink sink) : sink_(std::move(sink)) {}
  virtual ~LauncherOutput() = default;
  LauncherOutput(const LauncherOutput&) = delete;
  LauncherOutput& operator=(const LauncherOutput&) = delete;

  virtual void feed(Stream stream, std::string_view bytes) = 0;
  // The launcher has exited: what is still held goes out.
  virtual void finish() = 0;
  // Once the launcher has exited with `whole`: the rank that ended the gang
  // and how (its marker, the launcher's word on a signal or a lost host);
  // nullopt when no rank did (a non-zero `whole` is then the launcher's own
  // failure). `launches`: the gang, in rank order.
  virtual std::optional<Blame> blame(const RankExit& whole, std::span<const RankLaunch> launches) const = 0;
  // Ranks whose end was seen while the launcher still runs, each once, with
  // its exit code: reported at once, unless 143 (how a launcher stops its
  // ranks; its own exit says more). Default: none (ends come at the end).
  virtual std::vector<std::pair<int, int>> take_ended() { return {}; }
  // A rank's exit code as ddl reports it. Default: the code alone.
  virtual RankExit exit_of_code(int code) const { return RankExit{code}; }

  // The launcher's own text (not a rank's), capped: for -v and its failure.
  const std::string& launcher_text() const { return launcher_text_; }

protected:
  void to_rank(int rank, Stream stream, std::string_view bytes) { sink_(rank, stream, bytes); }
  void launcher_says(std::string_view text);

private:
  Sink sink_;
  std::string launcher_text_;
};

// The skeleton of a backend that hands the whole gang to a launcher (mpirun,
// srun), as PRRTE's plm/base is of its launchers: the launcher runs on a
// thread of its own for as long as it lives, every rank is reported started
// with its pid, its output goes through the backend's parser, and when it
// exits every rank gets exactly one end: the blamed rank's, SIGTERM for the
// others, or the launcher's failure for all. Signals go to the launcher once
// per call. A new launcher (PBS pbsdsh, LSF, flux run) derives from this and
// writes find_launcher(), command() (the argv builder, with
// split_gang_env and the rank script of launcher_command.hpp) and
// parse_output() (the output parser); deliver() when a signal does not
// reach the ranks through the launcher's own process.
class LauncherBackend : public Backend {
public:
  ~LauncherBackend() override;

  Result<void> prepare(const Plan& plan, std::span<const RankLaunch> launches) final;
  GangStart start(std::span<const RankLaunch> launches, RankEvents& events) final;
  void signal_all(int signo) final;
  // The watchdog's dump: dump_command() for the rank, run here for as long
  // as the launcher runs (or `timeout` and 15s for the way to its host),
  // its output the rank's stderr until the rank's end is reported. False
  // when the launcher gives no dump command.
  bool dump_stacks(int rank, DumpTool tool, Millis timeout) final;
  // Up to `settle` for the launcher to end on its own, then SIGTERM, up to
  // 10s, then SIGKILL. Derived classes call it first in their destructor.
  void shutdown() final;
  // The launcher's command line, one word per line.
  std::string dry_run_text(std::span<const RankLaunch> launches) final;

protected:
  // `launcher`: the program, for messages ("srun failed (exit 1)").
  explicit LauncherBackend(std::string launcher, std::chrono::milliseconds settle = {});

  // Whether the launcher can run here, and what the plan needs before any
  // attempt (mpirun's hostfile, written with gang_file()).
  virtual Result<void> find_launcher(const Plan& plan) = 0;
  // The command that starts `launches` (rank order). `dry_run`: for
  // --dry-run, no file written (gang_file names it <NAME>).
  virtual Result<LauncherCommand> command(std::span<const RankLaunch> launches, bool dry_run) = 0;
  // The parser of one gang's output.
  virtual std::unique_ptr<LauncherOutput> parse_output(int world_size, LauncherOutput::Sink sink) = 0;
  // How `signo` reaches every rank. Default: to the launcher's process.
  virtual void deliver(int signo);
  // The command (argv, run on this machine) that runs the stack dumper
  // (backends/stack_dump) on `launch`'s rank where it runs, its stacks on
  // stdout. Default: nullopt (the launcher's ranks cannot be reached).
  virtual std::optional<std::vector<std::string>> dump_command(const RankLaunch& launch, DumpTool tool,
                                                               Millis timeout);

  // `signo` to the launcher's process, while it runs.
  void kill_launcher(int signo);
  // True once the launcher of the current gang has exited and every rank's
  // end is reported.
  bool launcher_done() const { return done_; }
  // `text` in the file NAME of a private folder (0700, the file 0600), which
  // replaces the one before and goes with the backend: the launcher's
  // hostfile. Its path, or "<NAME>" when `dry_run`.
  Result<std::string> gang_file(const std::string& name, const std::string& text, bool dry_run);

private:
  void run(LauncherCommand command, RankEvents& events);
  void report_exits(int status, const LauncherOutput& output);
  void report_exit(int rank, RankExit how);
  void run_dumper(int rank, std::vector<std::string> argv, Millis timeout);
  // Ends the dumpers (TERM, then KILL after 3s) and joins their threads.
  void stop_dumpers();

  const std::string launcher_;
  const std::chrono::milliseconds settle_;
  std::string dir_;                   // gang_file's folder
  bool prepared_ = false;
  std::vector<RankLaunch> launches_;  // the gang; the runner thread reads it
  RankEvents* events_ = nullptr;
  std::vector<char> reported_;        // ranks whose end is reported (runner thread; report_mutex_)
  std::mutex report_mutex_;           // a dumper's output against a rank's end
  std::mutex dump_mutex_;             // guards the three below
  std::vector<std::thread> dumpers_;
  std::vector<long> dumper_pids_;
  bool dumps_stopped_ = false;        // until the next start(): no dumper may begin
  std::mutex mutex_;                  // guards pid_ against its reaping
  std::thread runner_;
  std::atomic<long> pid_{-1};
  std::atomic<bool> done_{false};
};

} // namespace ddl
