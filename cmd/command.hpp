// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"

namespace ddl::cmd {

// The subcommand chosen on the command line; run after parsing, so that exit
// codes stay under ddl's control (no work inside CLI11 callbacks).
using Command = std::function<int()>;

// Options shared by run, hosts, bench and render.
struct CommonOptions {
  std::string job_file;
  Overrides overrides;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
};

// The words after "--" on the command line (empty when there was none).
void set_trailing_command(std::vector<std::string> words);
const std::vector<std::string>& trailing_command();

void add_common_options(CLI::App& sub, CommonOptions& opts);
// Whether the subcommand `app` ran has the common options: it loads a job
// and arms the stop token itself (load_job_for); the others run with the
// default signal actions (main releases the signals it held for them).
bool loads_a_job(const CLI::App& app);
// Whether the job's timeout runs from now (run, bench): it then covers every
// phase, host discovery and connecting included.
enum class JobClock { stopped, starts };
// Sets the log level from -v/-q and arms the stop token (signals; see
// src/util/signals.hpp); the command line's overrides, with the command
// after "--".
Result<Overrides> start_command(const CommonOptions& opts);
// start_command, then loads the job with the overrides.
Result<JobSpec> load_job_for(const CommonOptions& opts, JobClock clock = JobClock::stopped);
// Prints `error` as "ddl: error: ..." and returns its exit code; with
// --json on the command line also an "error" event on stdout (see
// error_event).
int report(const Error& error);
// Whether report() also writes the JSON event (main sets it from --json).
void set_json_errors(bool on);

// Writes `text` to stdout as it is (no format parsing).
void write_stdout(std::string_view text);

void add_bench(CLI::App& app, Command& selected);
void add_completions(CLI::App& app, Command& selected);
void add_heartbeat(CLI::App& app, Command& selected);
void add_hosts(CLI::App& app, Command& selected);
void add_init(CLI::App& app, Command& selected);
// ps, logs, stop and signal (cmd/live.cpp).
void add_live(CLI::App& app, Command& selected);
// `ddl pin CPUS -- PROGRAM...` (hidden; cmd/pin.cpp).
void add_pin(CLI::App& app, Command& selected);
void add_render(CLI::App& app, Command& selected);
void add_rsh(CLI::App& app, Command& selected);
void add_run(CLI::App& app, Command& selected);
void add_sweep(CLI::App& app, Command& selected);
void add_worker(CLI::App& app, Command& selected);
// `ddl worker pmix-host` (cmd/pmix_host.cpp), under `ddl worker`.
void add_pmix_host_worker(CLI::App& worker, Command& selected);

} // namespace ddl::cmd
