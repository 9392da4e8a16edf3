// SPDX-License-Identifier: MIT
#pragma once

#include <span>
#include <string>
#include <vector>

#include "backends/launcher_command.hpp"
#include "src/launch/backend.hpp"
#include "src/util/error.hpp"

namespace ddl::mpirun {

// How ddl starts a gang with Open MPI's mpirun (backend = "mpirun"):
//   mpirun --hostfile F -np N --tag-output [--allow-run-as-root]
//          --mca plm_rsh_agent "DDL rsh" --mca plm_rsh_no_tree_spawn 1
//          --mca orte_leave_session_attached 1 (orted stays under the shim)
//          [--wdir DIR] [job.mpirun.args...] -x NAME... sh -c RANK_SCRIPT ddl-rank COMMAND...
// Values never appear on the command line (split_gang_env): a variable that
// is the same for every rank is set in mpirun's environment and forwarded with
// `-x NAME`; the rest of each rank's variables travel in DDL_MPI_ENV_<rank>,
// which RANK_SCRIPT evaluates for its OMPI_COMM_WORLD_RANK and unsets.

struct MpirunSettings {
  std::string mpirun = "mpirun";
  std::string hostfile;        // path of the OpenMPI hostfile
  std::string ddl_path;        // this binary, for the rsh agent
  std::string workdir;         // "" = mpirun's default (the launcher's cwd)
  bool as_root = false;        // adds --allow-run-as-root
  std::string rsh_transport;   // "ssh" or "kubernetes", for `ddl rsh`
  std::string job_file;        // for `ddl rsh` to read [ssh] / [kubernetes]
  std::vector<std::string> extra_args;  // job.mpirun.args (`ddl mpirun --mca ...`), after ddl's own
};

// `launches`: every rank's launch, in rank order (their env and argv).
Result<LauncherCommand> build_mpirun_command(std::span<const RankLaunch> launches, const MpirunSettings& settings);

// The sh program each rank runs under mpirun (exported for tests).
std::string rank_script(int world_size);

// The rank script's names; it prints "ddl-mpi: rank R exit C" (tagged by
// mpirun) when the command fails, so that ddl knows which rank failed first.
inline constexpr RankScript k_rank_script{"OMPI_COMM_WORLD_RANK", "mpirun", "DDL_MPI_ENV_", "ddl-mpi: rank "};

} // namespace ddl::mpirun
