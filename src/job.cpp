// SPDX-License-Identifier: MIT
// Placeholder until the job-file loader lands.
#include "src/job.hpp"

namespace ddl {

Result<JobSpec> load_job(const std::string& path, const Overrides& overrides) {
  JobSpec job;
  job.source = path;
  job.command = overrides.command;
  return job;
}

} // namespace ddl
