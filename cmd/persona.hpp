// SPDX-License-Identifier: MIT
#pragma once

// The personality subcommands: `ddl torchrun|mpirun|horovodrun|deepspeed`
// take their launcher's words untouched (no CLI11, no "--" split), so main
// hands them over before parsing its own.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/persona/registry.hpp"

namespace ddl::cmd {

// Lists the personalities among `app`'s subcommands (for `ddl --help`).
void add_personas(CLI::App& app);

// Reads `args` (the words after `ddl NAME`) with `persona` and runs the job
// as `ddl run` does; its exit code.
int run_persona(const persona::Persona& persona, const std::vector<std::string>& args);

} // namespace ddl::cmd
