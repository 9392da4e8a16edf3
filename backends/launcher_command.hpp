// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/util/error.hpp"

namespace ddl {

// What every launcher backend (mpirun, srun) builds its command from. Values
// never appear on a command line: a variable with the same value on every
// rank goes into the launcher's environment, which hands it to every rank;
// the rest of each rank's variables travel in one variable per rank,
// PREFIX<rank>, as sh `export` lines that the rank script evaluates for its
// own rank and unsets.

// The command that starts the whole gang.
struct LauncherCommand {
  std::vector<std::string> argv;
  EnvList env;            // set in the launcher's environment
  std::string note;       // --dry-run: where the values travel
  std::string appendix;   // --dry-run: printed after the command (a hostfile)
};

// The ranks' env, split.
struct GangEnv {
  EnvList shared;                  // the same on every rank, in first-seen order
  std::vector<std::string> ranks;  // per rank: "export NAME='value'\n" lines of the rest
};

// Splits `launches`' env (rank order); names `skip` says yes to are left out
// (variables the launcher sets itself). A value with a NUL is an error
// (ExitCode::usage).
Result<GangEnv> split_gang_env(std::span<const RankLaunch> launches,
                               const std::function<bool(std::string_view)>& skip = {});

// The launcher's working folder for the ranks (--wdir, --chdir): the job's
// workdir, or "" (the launcher's own default) when the job named none.
std::string launcher_workdir(std::span<const RankLaunch> launches);

// The ranks that read ddl's stdin (RankLaunch::reads_stdin), as launchers
// spell them (mpirun --stdin, srun --input): "none", "all" or one rank "R".
std::string launcher_stdin_target(std::span<const RankLaunch> launches);

// The rank script: the sh program every rank runs under the launcher, as
// `sh -c SCRIPT ddl-rank COMMAND...`.
struct RankScript {
  std::string_view rank_variable;  // the launcher's rank: "OMPI_COMM_WORLD_RANK"
  std::string_view launcher;       // "mpirun", for "ddl: not started by mpirun"
  std::string_view env_prefix;     // "DDL_MPI_ENV_"
  std::string_view exit_marker;    // "ddl-mpi: rank "
};
// Its first lines: refuse to run outside the launcher (exit 125), take this
// rank's variables, unset every rank's, then unset `unset` (names and the
// script's own helpers). `first` comes right after the check.
std::string rank_script_head(const RankScript& script, int world_size, std::string_view unset,
                             std::string_view first = {});
// The line after the command: "EXIT_MARKER<rank> exit <code>" on stderr when
// it failed ($__ddl_rc holds its status), for ddl to know the first rank
// that failed and its code.
std::string rank_script_exit_line(const RankScript& script);
// A marker line's rank and code ("ddl-mpi: rank 3 exit 7" -> {3, 7});
// nullopt when `line` is no exit marker.
std::optional<std::pair<int, int>> parse_exit_marker(std::string_view line, std::string_view exit_marker);

// `command` for --dry-run: "LAUNCHER command (NOTE):" and one word per line,
// quoted for sh, then the appendix.
std::string launcher_dry_run(std::string_view launcher, const LauncherCommand& command);

// The argv for -v: the whole command line, each word quoted for sh (the
// rank script too), as --dry-run shows it.
std::string launcher_words(const std::vector<std::string>& argv);

} // namespace ddl
