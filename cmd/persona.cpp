// SPDX-License-Identifier: MIT
// `ddl torchrun`, `ddl mpirun`, `ddl horovodrun`, `ddl deepspeed`: a peer's
// command line read by its personality (src/persona), then the one pipeline
// of `ddl run`.
#include "cmd/persona.hpp"

#include <cstdio>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "cmd/command.hpp"
#include "cmd/run.hpp"
#include "src/session/interpreter_check.hpp"

namespace ddl::cmd {

namespace {

// The module a launcher's ranks need from their Python (its own interpreter
// has it): "" for launchers that run any program.
std::string needed_module(std::string_view persona) {
  if (persona == "torchrun") return "torch";
  if (persona == "deepspeed") return "deepspeed";
  return "";
}

Result<int> run_launch(persona::Launch& launch, const std::string& module) {
  CommonOptions common;
  common.job_file = launch.job_file;
  common.overrides = launch.overrides;
  common.verbose = launch.verbose;
  common.quiet = launch.quiet;
  auto job = load_job_for(common, JobClock::starts);
  if (!job) {
    return fail(job.error());
  }
  for (const std::string& warning : launch.warnings) {
    spdlog::warn("{}", warning);
  }
  for (const persona::JobEdit& edit : launch.job_edits) {
    edit(*job);
  }
  if (auto has_command = require_command(*job); !has_command) {
    return fail(has_command.error());
  }
  if (!module.empty()) {
    session::warn_interpreter_without(*job, module);
  }
  // The personality is asked once the job is planned; it answers with the
  // job it launches, the planned one untouched.
  auto persona_check = [&launch](const JobSpec& planned_job,
                                 const session::PlannedJob& planned) -> Result<JobSpec> {
    const persona::PlanView view{planned.plan, planned.backend->ranks_are_local()};
    JobSpec answered = planned_job;
    for (const persona::PlanEdit& edit : launch.plan_edits) {
      if (auto done = edit(answered, view); !done) {
        return fail(done.error());
      }
    }
    return answered;
  };
  return run_loaded_job(*job, launch.dry_run, persona_check);
}

} // namespace

void add_personas(CLI::App& app) {
  for (const persona::Persona& persona : persona::personas()) {
    // Listed in `ddl --help`; run_persona reads their words itself.
    app.add_subcommand(std::string(persona.name), std::string(persona.summary))->allow_extras();
  }
}

int run_persona(const persona::Persona& persona, const std::vector<std::string>& args) {
  const persona::Machine machine = persona::this_machine();
  auto launch = persona.read(args, machine);
  if (!launch) {
    int code = report(launch.error());
    fmt::print(stderr, "Run 'ddl {} --help' for usage.\n", persona.name);
    return code;
  }
  if (launch->help) {
    write_stdout(persona.help());
    return 0;
  }
  auto code = run_launch(*launch, needed_module(persona.name));
  return code ? *code : report(code.error());
}

} // namespace ddl::cmd
