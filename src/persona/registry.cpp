// SPDX-License-Identifier: MIT
#include "src/persona/registry.hpp"

#include <algorithm>
#include <array>

#include "src/persona/deepspeed.hpp"
#include "src/persona/horovodrun.hpp"
#include "src/persona/mpirun.hpp"
#include "src/persona/torchrun.hpp"

namespace ddl::persona {

namespace {

constexpr std::array k_personas = {
    Persona{"deepspeed", "Run a DeepSpeed launcher command line (its hostfile, --include, --num_gpus) under ddl",
            deepspeed_options, read_deepspeed, deepspeed_help, deepspeed_run_habits},
    Persona{"horovodrun", "Run a horovodrun command line (-np, -H, Gloo or MPI, tuning flags) under ddl",
            horovodrun_options, read_horovodrun, horovodrun_help, nullptr},
    Persona{"mpirun", "Run an Open MPI mpirun command line through ddl's mpirun backend", mpirun_options,
            read_mpirun, mpirun_help, nullptr},
    Persona{"torchrun", "Run a torchrun command line on every host at once under ddl", torchrun_options,
            read_torchrun, torchrun_help, torchrun_run_habits},
};

} // namespace

std::span<const Persona> personas() { return k_personas; }

const Persona* find_persona(std::string_view name) {
  auto found = std::ranges::find(k_personas, name, &Persona::name);
  return found == k_personas.end() ? nullptr : &*found;
}

} // namespace ddl::persona
