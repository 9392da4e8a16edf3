// SPDX-License-Identifier: MIT
#pragma once

// Pass "output": how a run's rank output is shown and logged, from the job's
// rules and the plan.

#include "src/job/job.hpp"
#include "src/launch/output.hpp"
#include "src/plan/plan.hpp"
#include "src/util/line_prefix.hpp"

namespace ddl::session {

// The line prefix: --prefix or job.prefix, else torchrun's
// TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE from ddl's environment, else "[{rank}] ".
LinePrefix line_prefix_for(const JobSpec& job);

// How rank output is shown and logged; the rules that need the plan
// (--output-ranks within the world, --fold without --json).
Result<OutputOptions> output_options(const JobSpec& job, const Plan& plan, bool json);

} // namespace ddl::session
