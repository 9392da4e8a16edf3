// SPDX-License-Identifier: MIT
#pragma once

// `ddl deepspeed`: DeepSpeed's launcher's command line (DeepSpeed 0.19.6's
// deepspeed/launcher/runner.py and launch.py) read into ddl's job: its
// hostfile (`host slots=N`, /job/hostfile by default), --include/--exclude,
// --num_nodes/--num_gpus, .deepspeed_env from the home and working
// directories, its exported variables, and the script's --local_rank=N.

#include <span>
#include <string>
#include <vector>

#include "src/persona/persona.hpp"

namespace ddl::persona {

std::span<const Option> deepspeed_options();

// Reads `args` (the words after `ddl deepspeed`).
Result<Launch> read_deepspeed(const std::vector<std::string>& args, const Machine& machine);

std::string deepspeed_help();

// DeepSpeed's per-node options, which `ddl run` spells otherwise
// (cmd/habits); its master port, address and node rank are torchrun's
// spellings too, which torchrun_run_habits names.
std::vector<HabitSpelling> deepspeed_run_habits();

} // namespace ddl::persona
