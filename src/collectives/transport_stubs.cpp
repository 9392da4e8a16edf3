// SPDX-License-Identifier: MIT
// The nccl and mpi transports of a build without CUDA/NCCL or MPI headers.
#include <cstdlib>

#include "src/collectives/transports.hpp"

namespace ddl::coll {

bool started_under_mpirun() { return std::getenv("OMPI_COMM_WORLD_RANK") != nullptr; }

#ifndef DDL_HAVE_NCCL
namespace {
constexpr const char* k_no_nccl_build =
    "this ddl was built without NCCL support (no CUDA/NCCL headers at build time)";
}

bool nccl_usable(int /*local_rank*/, std::string* why) {
  if (why != nullptr) {
    *why = k_no_nccl_build;
  }
  return false;
}

Result<std::unique_ptr<Collective>> connect_nccl(int /*rank*/, int /*world*/, int /*local_rank*/,
                                                 const Allgather& /*exchange*/) {
  return fail(ExitCode::launch, std::string(k_nccl_unavailable) + k_no_nccl_build +
                                    "; use --transport tcp");
}
#endif

#ifndef DDL_HAVE_MPI
Result<std::unique_ptr<Collective>> connect_mpi() {
  return fail(ExitCode::launch,
              "the mpi transport is not available: this ddl was built without MPI; use "
              "--transport tcp");
}
#endif

} // namespace ddl::coll
