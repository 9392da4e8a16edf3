// SPDX-License-Identifier: MIT
// `ddl torchrun`, `ddl mpirun`, `ddl horovodrun`, `ddl deepspeed`: a peer's
// command line read by its personality (src/persona), then the one pipeline
// of `ddl run`.
#include "cmd/persona.hpp"

#include <cstdio>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "cmd/run.hpp"
#include "src/session/persona_checks.hpp"

namespace ddl::cmd {

namespace {

Result<int> run_launch(const persona::Launch& launch, std::string_view persona_name) {
  CommonOptions common;
  common.job_file = launch.job_file;
  common.overrides = launch.overrides;
  common.verbose = launch.verbose;
  common.quiet = launch.quiet;
  auto loaded = load_job_for(common, JobClock::starts);
  if (!loaded) {
    return fail(loaded.error());
  }
  auto job = session::persona_job(std::move(*loaded), launch, persona_name);
  if (!job) {
    return fail(job.error());
  }
  return run_loaded_job(*job, launch.dry_run, session::persona_check(launch));
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
  auto code = run_launch(*launch, persona.name);
  return code ? *code : report(code.error());
}

} // namespace ddl::cmd
