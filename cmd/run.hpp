// SPDX-License-Identifier: MIT
#pragma once

// The half of `ddl run` after the job is loaded, shared with the
// personalities (cmd/persona.cpp): a JobRun, and --dry-run's print.

#include "src/job/job.hpp"
#include "src/session/job_run.hpp"

namespace ddl::cmd {

// Runs `job` (which has a command) through a JobRun with a personality's
// checks (`persona`), printing the plan instead with `dry_run`. The job's
// exit code, or ddl's own error.
Result<int> run_loaded_job(const JobSpec& job, bool dry_run, const session::PersonaCheck& persona);

} // namespace ddl::cmd
