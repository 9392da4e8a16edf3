// SPDX-License-Identifier: MIT
#include "src/session/run_output.hpp"

#include <cstdlib>

#include <fmt/core.h>

namespace ddl::session {

LinePrefix line_prefix_for(const JobSpec& job) {
  std::string problem;
  if (!job.prefix.empty()) {
    return LinePrefix::parse(job.prefix, problem).value_or(LinePrefix::standard());  // checked at load
  }
  if (const char* torch = std::getenv("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"); torch != nullptr && *torch != 0) {
    return LinePrefix::parse(from_torch_template(torch), problem).value_or(LinePrefix::standard());
  }
  return LinePrefix::standard();
}

Result<OutputOptions> output_options(const JobSpec& job, const Plan& plan, bool json) {
  if (job.output_ranks.highest() >= plan.world_size) {
    return fail(ExitCode::usage, fmt::format("--output-ranks: rank {} is not in this job of {} rank{} (0-{})",
                                             job.output_ranks.highest(), plan.world_size,
                                             plan.world_size == 1 ? "" : "s", plan.world_size - 1));
  }
  if (job.fold && json) {
    return fail(ExitCode::usage, "--fold: does not go with --json (output events are per line)");
  }
  OutputOptions output;
  output.json = json;
  output.log_dir = job.log_dir;
  output.strict_logs = job.strict_logs;
  output.split_logs = job.split_logs;
  output.prefix = line_prefix_for(job);
  output.timestamps = job.timestamps;
  output.output_ranks = job.output_ranks;
  output.fold = job.fold;
  return output;
}

} // namespace ddl::session
