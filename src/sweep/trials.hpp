// SPDX-License-Identifier: MIT
// The trials of a sweep: parameter values per trial (grid, random, list),
// and what each trial's ranks get from them (env, command).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "src/job/sweep_spec.hpp"
#include "src/util/env.hpp"

namespace ddl::sweep {

struct Trial {
  int index = 0;
  std::vector<std::pair<std::string, ParamValue>> params;  // in [sweep.parameters] order
};

// Every trial of `sweep`: grid = the product of the lists (the first
// parameter varies slowest), list = the i-th value of every list, random =
// `samples` draws (lists uniformly, ranges by their scale) from a generator
// seeded with `seed`, the same on every machine.
std::vector<Trial> make_trials(const SweepSection& sweep);

// `command` with each "{name}" of a parameter replaced by its value (other
// braces stay). `shell`: the command is one sh -c string, so a value that
// is not a number or plain word goes in quoted for sh.
std::vector<std::string> substitute(const std::vector<std::string>& command, const Trial& trial, bool shell);

// DDL_TRIAL, DDL_TRIAL_DIR and DDL_PARAM_<NAME> for every parameter.
EnvList trial_env(const Trial& trial, const std::string& trial_dir);

// "learning_rate=0.01 dropout=0.5": a trial in messages.
std::string describe(const Trial& trial);

} // namespace ddl::sweep
