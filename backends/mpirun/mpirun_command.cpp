// SPDX-License-Identifier: MIT
#include "backends/mpirun/mpirun_command.hpp"

#include <fmt/core.h>

namespace ddl::mpirun {

namespace {

// Names mpirun sets in every rank itself.
bool is_mpirun_own(std::string_view name) {
  return name.starts_with("OMPI_") || name.starts_with("PMIX_");
}

} // namespace

std::string rank_script(int world_size) {
  return rank_script_head(k_rank_script, world_size, "DDL_RSH_TRANSPORT DDL_RSH_JOB") +
         // A watchdog: if mpirun (or its daemon) goes away without ending this
         // rank, end the rank's process group (TERM, then KILL).
         "__ddl_p=$PPID\n"
         "( while kill -0 \"$__ddl_p\" 2>/dev/null; do sleep 1; done\n"
         "  kill -s TERM -- -$$ 2>/dev/null; sleep 2; kill -s KILL -- -$$ 2>/dev/null ) </dev/null >/dev/null 2>&1 &\n"
         "__ddl_w=$!\n"
         // Open MPI signals the rank's whole process group: SIGUSR1 and
         // SIGUSR2 are the rank's to answer, not the end of this wrapper.
         "trap : USR1 USR2\n"
         "\"$@\"\n"
         "__ddl_rc=$?\n"
         "kill \"$__ddl_w\" 2>/dev/null\n" +
         rank_script_exit_line(k_rank_script) + "exit \"$__ddl_rc\"\n";
}

Result<LauncherCommand> build_mpirun_command(std::span<const RankLaunch> launches, const MpirunSettings& settings) {
  if (launches.empty()) {
    return fail(ExitCode::usage, "mpirun: no ranks to start");
  }
  auto env = split_gang_env(launches, is_mpirun_own);
  if (!env) {
    return fail(env.error());
  }
  const int world = static_cast<int>(launches.size());
  LauncherCommand command;
  command.note = "values of -x NAME come from the environment, never the command line";
  command.argv = {settings.mpirun, "--hostfile", settings.hostfile, "-np", std::to_string(world),
                  "--tag-output"};
  if (settings.as_root) {
    command.argv.push_back("--allow-run-as-root");
  }
  command.argv.insert(command.argv.end(),
                      {"--mca", "plm_rsh_agent", settings.ddl_path + " rsh", "--mca",
                       "plm_rsh_no_tree_spawn", "1", "--mca", "orte_leave_session_attached", "1"});
  if (!settings.workdir.empty()) {
    command.argv.insert(command.argv.end(), {"--wdir", settings.workdir});
  }
  command.argv.insert(command.argv.end(), settings.extra_args.begin(), settings.extra_args.end());
  for (const auto& [name, value] : env->shared) {
    command.argv.insert(command.argv.end(), {"-x", name});
    command.env.emplace_back(name, value);
  }
  for (int rank = 0; rank < world; ++rank) {
    std::string blob = fmt::format("{}{}", k_rank_script.env_prefix, rank);
    command.argv.insert(command.argv.end(), {"-x", blob});
    command.env.emplace_back(blob, env->ranks[static_cast<std::size_t>(rank)]);
  }
  command.env.emplace_back("DDL_RSH_TRANSPORT", settings.rsh_transport);
  command.env.emplace_back("DDL_RSH_JOB", settings.job_file);
  command.argv.insert(command.argv.end(), {"sh", "-c", rank_script(world), "ddl-rank"});
  const auto& argv = launches.front().argv;
  command.argv.insert(command.argv.end(), argv.begin(), argv.end());
  return command;
}

} // namespace ddl::mpirun
