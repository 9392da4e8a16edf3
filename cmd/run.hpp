// SPDX-License-Identifier: MIT
#pragma once

// The half of `ddl run` after the job is loaded, shared with the
// personalities (cmd/persona.cpp): plan, then --dry-run's print or the
// launch with the job's output rules.

#include <functional>

#include "cmd/pipeline.hpp"
#include "src/job/job.hpp"

namespace ddl::cmd {

// Called once the job is planned, before anything is printed or launched:
// checks and edits that need the plan (a personality's).
using AfterPlan = std::function<Result<void>(JobSpec& job, const PlannedJob& planned)>;

// Plans `job` (which has a command), then prints the plan (`dry_run`; JSON
// with `json`) or launches and supervises it. The job's exit code, or ddl's
// own error.
Result<int> run_loaded_job(JobSpec& job, bool dry_run, bool json, const AfterPlan& after_plan = {});

} // namespace ddl::cmd
