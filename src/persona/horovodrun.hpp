// SPDX-License-Identifier: MIT
#pragma once

// `ddl horovodrun`: horovodrun's command line (Horovod 0.28.1's
// horovod/runner/launch.py) read into ddl's job: -np and the hosts, Gloo
// (ddl's own launch and Horovod's rendezvous, the default) or MPI (the
// mpirun backend), the elastic range, and the tuning flags passed to every
// rank as Horovod's variables, as horovodrun's config_parser sets them.

#include <span>
#include <string>
#include <vector>

#include "src/persona/persona.hpp"

namespace ddl::persona {

std::span<const Option> horovodrun_options();

// Reads `args` (the words after `ddl horovodrun`).
Result<Launch> read_horovodrun(const std::vector<std::string>& args, const Machine& machine);

std::string horovodrun_help();

} // namespace ddl::persona
