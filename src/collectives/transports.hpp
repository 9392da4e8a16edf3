// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <string>

#include "src/collectives/collective.hpp"

namespace ddl::coll {

// Every nccl transport error starts with this, whatever the reason (no GPU,
// no libcudart/libnccl, a build without NCCL); exit code 3.
inline constexpr const char* k_nccl_unavailable = "the nccl transport is not available: ";

// Whether this rank could use NCCL: a build with NCCL, libcudart and libnccl
// loadable at run time, and a GPU for `local_rank`. `why` says what is missing.
bool nccl_usable(int local_rank, std::string* why);

// One GPU per rank (by local rank, or the only visible one), NCCL's unique
// id shared through `exchange`, timing with CUDA events.
Result<std::unique_ptr<Collective>> connect_nccl(int rank, int world, int local_rank,
                                                 const Allgather& exchange);

// True when this process was started by mpirun (OMPI_COMM_WORLD_RANK set).
bool started_under_mpirun();
// MPI_Allreduce over MPI_COMM_WORLD; needs a build with MPI and mpirun.
Result<std::unique_ptr<Collective>> connect_mpi();

} // namespace ddl::coll
