// SPDX-License-Identifier: MIT
#include "src/session/persona_checks.hpp"

#include <string>

#include <spdlog/spdlog.h>

#include "src/session/interpreter_check.hpp"

namespace ddl::session {

namespace {

// The module a launcher's ranks need from their Python (its own interpreter
// has it): "" for launchers that run any program.
std::string needed_module(std::string_view persona) {
  if (persona == "torchrun") return "torch";
  if (persona == "deepspeed") return "deepspeed";
  return "";
}

} // namespace

Result<JobSpec> persona_job(JobSpec job, const persona::Launch& launch, std::string_view persona_name) {
  for (const std::string& warning : launch.warnings) {
    spdlog::warn("{}", warning);
  }
  for (const persona::JobEdit& edit : launch.job_edits) {
    edit(job);
  }
  if (auto has_command = require_command(job); !has_command) {
    return fail(has_command.error());
  }
  if (const std::string module = needed_module(persona_name); !module.empty()) {
    warn_interpreter_without(job, module);
  }
  return job;
}

PersonaCheck persona_check(const persona::Launch& launch) {
  return [&launch](const JobSpec& job, const PlannedJob& planned) -> Result<JobSpec> {
    const persona::PlanView view{planned.plan, planned.backend->ranks_are_local()};
    JobSpec answered = job;
    for (const persona::PlanEdit& edit : launch.plan_edits) {
      if (auto done = edit(answered, view); !done) {
        return fail(done.error());
      }
    }
    return answered;
  };
}

} // namespace ddl::session
