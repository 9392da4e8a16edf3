// SPDX-License-Identifier: MIT
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "cmd/command.hpp"
#include "src/util/log.hpp"
#include "src/util/signals.hpp"

namespace ddl::cmd {

namespace {
std::vector<std::string>& trailing_storage() {
  static std::vector<std::string> words;
  return words;
}
} // namespace

void set_trailing_command(std::vector<std::string> words) { trailing_storage() = std::move(words); }
const std::vector<std::string>& trailing_command() { return trailing_storage(); }

void add_common_options(CLI::App& sub, CommonOptions& opts) {
  // No ExistingPath check: load_job reports a missing file in its own words.
  sub.add_option("job", opts.job_file, "Job file (TOML)");
  sub.add_option("-H,--hosts", opts.overrides.hosts, "Hosts, e.g. node[01-04]:8,gpu-a:4");
  sub.add_option("--hostfile", opts.overrides.hostfile, "OpenMPI, DeepSpeed or MPICH hostfile");
  sub.add_flag("--slurm", opts.overrides.slurm,
               "Hosts from the Slurm allocation (default inside salloc/sbatch when no other source)");
  sub.add_option("--backend", opts.overrides.backend,
                 "auto (default: mpirun for mpi, slurm inside an allocation, local when every "
                 "host is this machine, else ssh), local, ssh, kubernetes, mpirun or slurm")
      ->check(CLI::IsMember(backend_names()));
  sub.add_option("--np", opts.overrides.np_range,
                 "Number of ranks (default: sum of slots); MIN:MAX restarts on fewer hosts when one is lost");
  sub.add_flag("--json", opts.json, "Machine-readable JSON on stdout");
  sub.add_flag("-v,--verbose", opts.verbose, "Explain choices (repeat for debug)");
  sub.add_flag("-q,--quiet", opts.quiet, "Only errors on stderr");
}

Result<JobSpec> load_job_for(const CommonOptions& opts, JobClock clock) {
  set_log_level(opts.verbose, opts.quiet);
  // From here on Ctrl-C, SIGTERM and the job's timeout end every phase.
  if (auto armed = stop::arm(); !armed) {
    return fail(armed.error());
  }
  Overrides overrides = opts.overrides;
  if (!trailing_command().empty()) {
    overrides.command = trailing_command();
  }
  auto job = load_job(opts.job_file, overrides);
  if (job && clock == JobClock::starts) {
    stop::set_timeout(job->timeout);
  }
  return job;
}

int report(const Error& error) {
  print_error(error.message);
  return to_int(error.code);
}

} // namespace ddl::cmd
