// SPDX-License-Identifier: MIT
#pragma once

// A run is a library call. `ddl run`, `ddl bench`, the four personalities
// and a sweep's trial all launch a loaded job through one JobRun: a list of
// named passes, each timed (mold's way: -v prints the phases "hosts",
// "plan" and "connect"; -vv each pass), in this order:
//
//   select backend → hosts → plan → preflight → personality checks →
//   MPI mode → output → hosts left → rounds → supervise
//
// The loaded job is read-only: a pass that changes what is launched (the
// MPI mode resolved, a personality's plan-time edits, the PMIx host workers,
// bench's worker program) returns a new job or plan, which the next passes
// use. cmd/ only reads options before and prints after.

#include <functional>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/server.hpp"
#include "src/job/job.hpp"
#include "src/launch/output.hpp"
#include "src/launch/report.hpp"
#include "src/session/mpi_mode.hpp"
#include "src/session/planned_job.hpp"
#include "src/session/round.hpp"

namespace ddl::session {

// A personality's checks and edits that need the plan: the job it launches
// (a changed copy of `job`), or why not.
using PersonaCheck = std::function<Result<JobSpec>(const JobSpec& job, const PlannedJob& planned)>;

// Called once the ranks are gone, while the rendezvous still holds what they
// left there (bench reads rank 0's results).
using AfterRanks = std::function<void(rendezvous::Server&)>;

// What the caller asks of one run.
struct RunAsk {
  bool dry_run = false;  // plan() only; the caller prints (no DNS is asked)
  bool json = false;     // output events as JSON Lines
  PersonaCheck persona;  // {}: no personality
  // ddl bench: the ranks run this program (ddl's worker, where the backend
  // has ddl) instead of job.command; the job's MPI mode, output rules and
  // restarts do not apply.
  std::function<std::vector<std::string>(const Backend&)> worker;
  std::function<void(const Plan&)> on_planned;          // told the plan before the launch
  std::function<void(const JobSummary&)> on_summary;    // told the job's summary
  // Told the hosts the preflight named (left out, or behind a stop or a
  // warning), each with why: a sweep excludes those, not the trial's others.
  std::function<void(const std::vector<LeftOutHost>&)> on_preflight;
  AfterRanks after_ranks;
  bool live = true;  // a control socket for ddl ps, logs, stop and signal
  // The preflight's check: its workers' lines and the gang's messages go
  // here instead of ddl's stdout and stderr, and the workers are stopped
  // this long after they start (the job's own timeout still holds).
  std::optional<int> output_fd;
  std::optional<Millis> worker_timeout;
  // Chooses the backend and the hosts its choice found; {}: the registry's
  // (select_job_backend). The unit tests give a fake backend here, as ninja
  // gives its builder a fake command runner.
  std::function<Result<SelectedBackend>(const JobSpec&)> select;
};

class JobRun {
public:
  // `loaded` must outlive the run.
  JobRun(const JobSpec& loaded, RunAsk ask);
  ~JobRun();
  JobRun(const JobRun&) = delete;
  JobRun& operator=(const JobRun&) = delete;

  // The passes up to "MPI mode": what --dry-run shows.
  Result<void> plan();
  // The passes from "output" on; after plan(). The job's exit code, or ddl's
  // own error.
  Result<int> launch();
  // plan() then launch().
  Result<int> run();

  // After plan(): the job as launched, its backend and plan, the PMIx launch.
  const JobSpec& job() const { return job_; }
  const PlannedJob& planned() const { return planned_; }
  const PmixLaunch& pmix() const { return pmix_; }
  // The passes run so far, in order (the unit tests read them).
  const std::vector<std::string>& passes_run() const { return passes_run_; }

private:
  struct Launching;
  using Pass = Result<void> (JobRun::*)();
  struct PassEntry {
    const char* name;
    const char* phase;  // the -v phase it counts in ("" none)
    Pass pass;
  };
  Result<void> run_passes(std::span<const PassEntry> passes);

  Result<void> select_backend();
  Result<void> find_hosts();
  Result<void> plan_ranks();
  Result<void> preflight();
  Result<void> leave_out(const std::vector<LeftOutHost>& left_out);
  Result<void> persona_checks();
  Result<void> mpi_mode();
  Result<void> output();
  Result<void> hosts_left();
  Result<void> rounds();
  Result<void> supervise_gang();

  const JobSpec& loaded_;
  RunAsk ask_;
  JobSpec job_;  // the job as launched: each editing pass returns the next one
  std::optional<SelectedBackend> selected_;
  Inventory hosts_;
  std::string mpi_why_;
  PlannedJob planned_;
  PmixLaunch pmix_{false, {}, {}, {}};
  OutputOptions output_;
  std::unique_ptr<Launching> launching_;
  std::vector<LeftOutHost> preflight_left_out_;  // elastic: the policy keeps them out of later rounds too
  ReachAnswers reach_answers_;  // elastic: the backend's preflight, asked once by the gate for "hosts left"
  std::optional<Result<int>> code_;
  std::vector<std::string> passes_run_;
};

} // namespace ddl::session
