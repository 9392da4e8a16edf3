// SPDX-License-Identifier: MIT
#pragma once

#include <span>
#include <string>
#include <vector>

#include "backends/launcher_command.hpp"
#include "src/job/job.hpp"
#include "src/launch/backend.hpp"
#include "src/util/error.hpp"

namespace ddl::mpirun {

// How ddl starts a gang with Open MPI's mpirun (backend = "mpirun"):
//   mpirun --hostfile F -np N --tag-output [--allow-run-as-root] --stdin R|none
//          --mca plm_rsh_agent "DDL rsh" --mca plm_rsh_no_tree_spawn 1
//          --mca orte_leave_session_attached 1 (orted stays under the shim)
//          [--wdir DIR] [job.mpirun.args...] -x NAME... sh -c RANK_SCRIPT ddl-rank COMMAND...
// (--stdin all is refused: Open MPI 4.1's delivers nothing and never ends.)
// MPICH (flavour "mpich"), with Hydra's own spellings (stdin goes to rank 0
// only; ddl closes it for --stdin none, and refuses another rank):
//   mpiexec.hydra -f F -n N -prepend-rank -launcher rsh -launcher-exec RSH
//                 [-wdir DIR] [job.mpirun.args...] -genvlist NAME,...
//                 sh -c RANK_SCRIPT ddl-rank COMMAND...
// RSH is a two-line script that runs `DDL rsh` (Hydra takes one path); the
// rank script reads PMI_RANK, Hydra's rank.
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
  std::string ssh_config;      // the job's ssh config (-F wins over [ssh] config), for `ddl rsh`
  std::vector<std::string> extra_args;  // job.mpirun.args (`ddl mpirun --mca ...`), after ddl's own
  MpiFlavour flavour = MpiFlavour::openmpi;  // openmpi or mpich, as found
  std::string rsh_exec;        // mpich: the script Hydra runs as its rsh launcher
  // mpich: the launcher's address as the hosts reach it (the rendezvous'),
  // which Hydra's proxies dial back; Hydra would use the launcher's
  // hostname, which the hosts may resolve elsewhere or not at all.
  std::string launcher_address;
};

// `launches`: every rank's launch, in rank order (their env and argv).
Result<LauncherCommand> build_mpirun_command(std::span<const RankLaunch> launches, const MpirunSettings& settings);

// The rank script's names; it prints "ddl-mpi: rank R exit C" (tagged by
// mpirun) when the command fails, so that ddl knows which rank failed first.
inline constexpr RankScript k_rank_script{"OMPI_COMM_WORLD_RANK", "mpirun", "DDL_MPI_ENV_", "ddl-mpi: rank "};
inline constexpr RankScript k_hydra_rank_script{"PMI_RANK", "mpiexec", "DDL_MPI_ENV_", "ddl-mpi: rank "};

// The sh program each rank runs under mpirun (exported for tests).
std::string rank_script(int world_size, const RankScript& script = k_rank_script);

// The script Hydra runs as its rsh launcher: `DDL rsh HOST COMMAND...`.
std::string hydra_rsh_script(const std::string& ddl_path);

} // namespace ddl::mpirun
