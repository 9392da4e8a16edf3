// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "cmd/command.hpp"
#include "src/util/error_event.hpp"
#include "src/util/json.hpp"
#include "src/util/log.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl::cmd {

namespace {
std::vector<std::string>& trailing_storage() {
  static std::vector<std::string> words;
  return words;
}

bool g_json_errors = false;

// The subcommands given the common options (they load a job).
std::vector<const CLI::App*>& job_commands() {
  static std::vector<const CLI::App*> commands;
  return commands;
}

} // namespace

void set_trailing_command(std::vector<std::string> words) { trailing_storage() = std::move(words); }
const std::vector<std::string>& trailing_command() { return trailing_storage(); }

bool loads_a_job(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {  // those given, nested ones (bench allreduce) too
    if (std::ranges::find(job_commands(), sub) != job_commands().end() || loads_a_job(*sub)) {
      return true;
    }
  }
  return false;
}

void add_common_options(CLI::App& sub, CommonOptions& opts) {
  job_commands().push_back(&sub);
  // No ExistingPath check: load_job reports a missing file in its own words.
  sub.add_option("job", opts.job_file, "Job file (TOML)");
  // One value per -H, so that a JOB after it is not taken for a host.
  sub.add_option("-H,--hosts", opts.overrides.hosts,
                 "Hosts, e.g. node[01-04]:8,gpu-a:4,ml@gpu-b:2222:4 (a host listed again gets more slots)")
      ->allow_extra_args(false);
  sub.add_option("--hostfile", opts.overrides.hostfile, "OpenMPI, DeepSpeed or MPICH hostfile");
  sub.add_flag("--slurm", opts.overrides.slurm,
               "Hosts from the Slurm allocation (default inside salloc/sbatch when no other source)");
  sub.add_option("--backend", opts.overrides.backend,
                 "auto (default: mpirun for mpi, slurm inside an allocation, local when every "
                 "host is this machine, else ssh), local, ssh, kubernetes, mpirun or slurm")
      ->check(CLI::IsMember(backend_names()));
  sub.add_option("--include", opts.overrides.include,
                 "Only these hosts and slots, DeepSpeed's way: host1:0,1@host2");
  sub.add_option("--exclude", opts.overrides.exclude, "All but these hosts and slots: host1:0@host2");
  sub.add_option("--np", opts.overrides.np,
                 "Number of ranks (default: sum of slots); MIN:MAX restarts on fewer hosts when one is lost");
  sub.add_option("-F,--ssh-config", opts.overrides.ssh_config,
                 "OpenSSH config file to read, as ssh -F does (\"none\": none); [ssh] config");
  sub.add_flag("--json", opts.json, "Machine-readable JSON on stdout");
  sub.add_flag("-v,--verbose", opts.verbose, "Explain choices (repeat for debug)");
  sub.add_flag("-q,--quiet", opts.quiet, "Only errors on stderr");
}

Result<Overrides> start_command(const CommonOptions& opts) {
  set_log_level(opts.verbose, opts.quiet);
  // From here on Ctrl-C, SIGTERM and the job's timeout end every phase.
  if (auto armed = stop::arm(); !armed) {
    return fail(armed.error());
  }
  Overrides overrides = opts.overrides;
  if (!trailing_command().empty()) {
    overrides.command = trailing_command();
  }
  return overrides;
}

Result<JobSpec> load_job_for(const CommonOptions& opts, JobClock clock) {
  auto overrides = start_command(opts);
  if (!overrides) {
    return fail(overrides.error());
  }
  auto job = load_job(opts.job_file, *overrides);
  if (job && clock == JobClock::starts) {
    stop::set_timeout(job->timeout);
  }
  return job;
}

void write_stdout(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

void set_json_errors(bool on) { g_json_errors = on; }

int report(const Error& error) {
  print_error(error.message);
  if (g_json_errors) {
    std::fputs((to_json_text(error_event(error)) + "\n").c_str(), stdout);
    std::fflush(stdout);
  }
  return to_int(error.code);
}

} // namespace ddl::cmd
