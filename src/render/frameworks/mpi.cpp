// SPDX-License-Identifier: MIT
#include "src/render/frameworks/mpi.hpp"

#include <string>

namespace ddl {

void add_mpi_env(EnvList& env, const RankView& r) {
  env.emplace_back("OMPI_COMM_WORLD_RANK", std::to_string(r.slot.rank));
  env.emplace_back("OMPI_COMM_WORLD_SIZE", std::to_string(r.world));
  env.emplace_back("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r.slot.local_rank));
  env.emplace_back("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(r.slot.local_size));
  env.emplace_back("PMI_RANK", std::to_string(r.slot.rank));
  env.emplace_back("PMI_SIZE", std::to_string(r.world));
}

} // namespace ddl
