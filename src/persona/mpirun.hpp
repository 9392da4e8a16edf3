// SPDX-License-Identifier: MIT
#pragma once

// `ddl mpirun`: Open MPI's mpirun command line (Open MPI 4.1's mpirun(1))
// read into ddl's job and run by the mpirun backend: -np and the hosts, -x,
// -N, -wdir and the output options in ddl's words; --mca, --bind-to,
// --map-by (those that keep ddl's host-by-host rank order), --oversubscribe
// and a few more given to mpirun itself (job.mpirun.args).

#include <span>
#include <string>
#include <vector>

#include "src/persona/persona.hpp"

namespace ddl::persona {

std::span<const Option> mpirun_options();

// Reads `args` (the words after `ddl mpirun`).
Result<Launch> read_mpirun(const std::vector<std::string>& args, const Machine& machine);

std::string mpirun_help();

} // namespace ddl::persona
