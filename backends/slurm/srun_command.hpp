// SPDX-License-Identifier: MIT
#pragma once

#include <span>
#include <string>
#include <vector>

#include "backends/launcher_command.hpp"
#include "src/launch/backend.hpp"
#include "src/util/error.hpp"

namespace ddl::slurm {

// How ddl starts a gang as one Slurm job step (backend = "slurm"):
//   env -u SLURM_NTASKS_PER_NODE -u SLURM_DISTRIBUTION
//   srun [srun_args...] --ntasks N --distribution=arbitrary --kill-on-bad-exit=1
//        --label --input=R|all|none [--chdir DIR] sh -c RANK_SCRIPT ddl-rank COMMAND...
// with SLURM_HOSTFILE naming a private file of one host per rank (the plan's
// placement, rank order). Values never appear on the command line
// (split_gang_env): a variable that is the same for every rank is set in
// srun's environment (srun hands its whole environment to every task,
// Slurm's default); the rest of each rank's variables travel in
// DDL_SLURM_ENV_<rank>, which RANK_SCRIPT evaluates for its SLURM_PROCID and
// unsets.

struct SrunSettings {
  std::string srun = "srun";
  std::string hostfile;                 // SLURM_HOSTFILE
  std::vector<std::string> srun_args;   // [slurm] srun_args, before ddl's own
  std::string workdir;                  // "" = srun's default (the launcher's cwd)
};

// `launches`: every rank's launch, in rank order. Its dry-run appendix lists
// SLURM_HOSTFILE.
Result<LauncherCommand> build_srun_command(std::span<const RankLaunch> launches, const SrunSettings& settings);

// SLURM_HOSTFILE's text: rank r's host on line r.
std::string srun_hostfile(std::span<const RankLaunch> launches);

// The sh program every task runs (exported for tests).
std::string rank_script(int world_size);

// The rank script's markers on stderr (taken out of the rank's output):
// rank 0 names the step once it runs ("ddl-slurm: step J.S"), a rank whose
// command failed says so ("ddl-slurm: rank R exit C").
inline constexpr std::string_view k_step_marker = "ddl-slurm: step ";
inline constexpr RankScript k_rank_script{"SLURM_PROCID", "srun", "DDL_SLURM_ENV_", "ddl-slurm: rank "};

} // namespace ddl::slurm
