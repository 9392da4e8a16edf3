// SPDX-License-Identifier: MIT
#pragma once

// MPI's rules: the Open MPI and PMI variables of each rank (the backend
// that makes the ranks one MPI world, mpirun, is chosen in backends/registry).

#include "src/render/render_env.hpp"

namespace ddl {

// OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE, PMI_RANK, PMI_SIZE.
void add_mpi_env(EnvList& env, const RankView& r);

} // namespace ddl
