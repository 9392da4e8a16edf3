// SPDX-License-Identifier: MIT
#pragma once

// The plan as other launchers' hostfiles (render --format hostfile,
// mpich-hostfile, deepspeed-hostfile; the mpirun backend's).

#include <string>

#include "src/plan/plan.hpp"

namespace ddl {

std::string openmpi_hostfile(const Plan& plan);
std::string mpich_hostfile(const Plan& plan);
std::string deepspeed_hostfile(const Plan& plan);

} // namespace ddl
