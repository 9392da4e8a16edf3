// SPDX-License-Identifier: MIT
#include "backends/slurm/srun_command.hpp"

#include <fmt/core.h>

namespace ddl::slurm {

namespace {

// Input variables of srun that would fight the arbitrary distribution.
constexpr const char* k_unset[] = {"SLURM_NTASKS_PER_NODE", "SLURM_DISTRIBUTION", "SLURM_NTASKS",
                                   "SLURM_NPROCS"};

} // namespace

// The wrapper runs the rank as its child so it can report the rank's exit
// code. Slurm signals every process of the step: the wrapper waits the
// signal out (a trap, which its child does not inherit) and the rank's own
// handler decides. A rank that ends after a stop signal (Ctrl-C, SIGTERM,
// scancel), or is killed by SIGHUP, SIGINT or SIGQUIT, is not a "bad exit"
// to srun: Slurm signals node by node (and without cgroups process by
// process), and --kill-on-bad-exit would SIGKILL the ranks not yet reached
// before their handlers run. Its marker still carries its code, and ddl
// ends the gang on it (LabeledOutput::take_ended).
std::string rank_script(int world_size) {
  return rank_script_head(k_rank_script, world_size, "SLURM_HOSTFILE",
                          fmt::format("[ \"$SLURM_PROCID\" != 0 ] || printf '{}%s.%s\\n' \"$SLURM_JOB_ID\" "
                                      "\"$SLURM_STEP_ID\" >&2\n",
                                      k_step_marker)) +
         "__ddl_stop=\n"
         "trap __ddl_stop=s HUP INT QUIT TERM\n"
         "trap : USR1 USR2 ALRM\n"
         "\"$@\"\n"
         "__ddl_rc=$?\n" +
         rank_script_exit_line(k_rank_script) +
         "case $__ddl_stop$__ddl_rc in s*|129|130|131) exit 0 ;; esac\n"
         "exit \"$__ddl_rc\"\n";
}

std::string srun_hostfile(std::span<const RankLaunch> launches) {
  std::string text;
  for (const auto& launch : launches) {
    text += launch.host.name + "\n";
  }
  return text;
}

Result<LauncherCommand> build_srun_command(std::span<const RankLaunch> launches, const SrunSettings& settings) {
  if (launches.empty()) {
    return fail(ExitCode::usage, "srun: no ranks to start");
  }
  auto env = split_gang_env(launches);
  if (!env) {
    return fail(env.error());
  }
  const int world = static_cast<int>(launches.size());
  LauncherCommand command;
  command.note = "the environment carries every value, never the command line";
  command.argv = {"env"};
  for (const char* name : k_unset) {
    command.argv.insert(command.argv.end(), {"-u", name});
  }
  command.argv.push_back(settings.srun);
  command.argv.insert(command.argv.end(), settings.srun_args.begin(), settings.srun_args.end());
  command.argv.insert(command.argv.end(), {"--ntasks", std::to_string(world), "--distribution=arbitrary",
                                           "--kill-on-bad-exit=1", "--label", "--input=" + launcher_stdin_target(launches)});
  if (!settings.workdir.empty()) {
    command.argv.insert(command.argv.end(), {"--chdir", settings.workdir});
  }
  command.env.emplace_back("SLURM_HOSTFILE", settings.hostfile);
  command.env.insert(command.env.end(), env->shared.begin(), env->shared.end());
  for (int rank = 0; rank < world; ++rank) {
    command.env.emplace_back(fmt::format("{}{}", k_rank_script.env_prefix, rank),
                             env->ranks[static_cast<std::size_t>(rank)]);
  }
  command.argv.insert(command.argv.end(), {"sh", "-c", rank_script(world), "ddl-rank"});
  const auto& argv = launches.front().argv;
  command.argv.insert(command.argv.end(), argv.begin(), argv.end());
  command.appendix = "SLURM_HOSTFILE (one host per rank):\n";
  for (const auto& launch : launches) {
    command.appendix += fmt::format("  {}\n", launch.host.name);
  }
  return command;
}

} // namespace ddl::slurm
