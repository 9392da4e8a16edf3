// SPDX-License-Identifier: MIT
#pragma once

// The personalities ddl has, by command name: the one file that knows all of
// them (cmd/persona.cpp registers and dispatches through it).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/persona/persona.hpp"

namespace ddl::persona {

struct Persona {
  std::string_view name;     // "torchrun": `ddl torchrun`
  std::string_view summary;  // one line for `ddl --help`
  std::span<const Option> (*options)();
  Result<Launch> (*read)(const std::vector<std::string>& args, const Machine& machine);
  std::string (*help)();
  // Its options that `ddl run` refuses, by spelling (cmd/habits); null: none.
  std::vector<HabitSpelling> (*run_habits)();
};

// deepspeed, horovodrun, mpirun, torchrun.
std::span<const Persona> personas();

// The personality named `name`, or nullptr.
const Persona* find_persona(std::string_view name);

} // namespace ddl::persona
