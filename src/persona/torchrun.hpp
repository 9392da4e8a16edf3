// SPDX-License-Identifier: MIT
#pragma once

// `ddl torchrun`: torchrun's command line (PyTorch 2.9's
// torch/distributed/run.py, commit 010929fd) read into ddl's job. One ddl
// starts every node, so --nnodes counts ddl's hosts (MIN:MAX is ddl's elastic
// range), --nproc-per-node sets each host's ranks, and torchrun's rendezvous
// flags either name what ddl does anyway or are refused with what to write.

#include <span>
#include <string>
#include <vector>

#include "src/persona/persona.hpp"

namespace ddl::persona {

// The options of `ddl torchrun`, torchrun's and ddl's own, for --help and
// the completions.
std::span<const Option> torchrun_options();

// Reads `args` (the words after `ddl torchrun`). torchrun's PET_<OPTION>
// variables are read first, as torchrun reads them, the command line wins.
Result<Launch> read_torchrun(const std::vector<std::string>& args, const Machine& machine);

// --help.
std::string torchrun_help();

// torchrun's per-node and rendezvous options, which `ddl run` spells
// otherwise (cmd/habits).
std::vector<HabitSpelling> torchrun_run_habits();

} // namespace ddl::persona
