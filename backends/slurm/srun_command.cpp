// SPDX-License-Identifier: MIT
#include "backends/slurm/srun_command.hpp"

#include <map>
#include <optional>

#include <fmt/core.h>

#include "src/util/text.hpp"

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
// ends the gang on it (SlurmBackend::run_srun).
std::string rank_script(int world_size) {
  return fmt::format(
      "case ${{SLURM_PROCID:-}} in ''|*[!0-9]*) echo 'ddl: not started by srun' >&2; exit 125 ;; esac\n"
      "[ \"$SLURM_PROCID\" != 0 ] || printf '{}%s.%s\\n' \"$SLURM_JOB_ID\" \"$SLURM_STEP_ID\" >&2\n"
      "eval \"__ddl_e=\\${{DDL_SLURM_ENV_$SLURM_PROCID:-}}\"\n"
      "__ddl_i=0\n"
      "while [ \"$__ddl_i\" -lt {} ]; do unset \"DDL_SLURM_ENV_$__ddl_i\"; __ddl_i=$((__ddl_i + 1)); done\n"
      "eval \"$__ddl_e\" || exit 125\n"
      "unset __ddl_e __ddl_i SLURM_HOSTFILE\n"
      "__ddl_stop=\n"
      "trap __ddl_stop=s HUP INT QUIT TERM\n"
      "trap : USR1 USR2 ALRM\n"
      "\"$@\"\n"
      "__ddl_rc=$?\n"
      "[ \"$__ddl_rc\" -eq 0 ] || printf '{}%s exit %s\\n' \"$SLURM_PROCID\" \"$__ddl_rc\" >&2\n"
      "case $__ddl_stop$__ddl_rc in s*|129|130|131) exit 0 ;; esac\n"
      "exit \"$__ddl_rc\"\n",
      k_step_marker, world_size, k_exit_marker);
}

std::string srun_hostfile(std::span<const RankLaunch> launches) {
  std::string text;
  for (const auto& launch : launches) {
    text += launch.host.name + "\n";
  }
  return text;
}

Result<SrunCommand> build_srun_command(std::span<const RankLaunch> launches, const SrunSettings& settings) {
  if (launches.empty()) {
    return fail(ExitCode::usage, "srun: no ranks to start");
  }
  // name -> value when every rank has it with this value, else nullopt.
  std::map<std::string, std::optional<std::string>> common;
  std::map<std::string, int> holders;
  for (const auto& launch : launches) {
    for (const auto& [name, value] : launch.env) {
      if (value.find('\0') != std::string::npos) {
        return fail(ExitCode::usage, fmt::format("env {} holds a NUL byte", name));
      }
      auto [it, inserted] = common.emplace(name, value);
      if (!inserted && it->second && *it->second != value) {
        it->second.reset();
      }
      ++holders[name];
    }
  }
  const int world = static_cast<int>(launches.size());
  auto shared = [&](const std::string& name) { return common[name] && holders[name] == world; };
  SrunCommand command;
  command.argv = {"env"};
  for (const char* name : k_unset) {
    command.argv.insert(command.argv.end(), {"-u", name});
  }
  command.argv.push_back(settings.srun);
  command.argv.insert(command.argv.end(), settings.srun_args.begin(), settings.srun_args.end());
  command.argv.insert(command.argv.end(), {"--ntasks", std::to_string(world), "--distribution=arbitrary",
                                           "--kill-on-bad-exit=1", "--label", "--input=none"});
  if (!settings.workdir.empty()) {
    command.argv.insert(command.argv.end(), {"--chdir", settings.workdir});
  }
  command.env.emplace_back("SLURM_HOSTFILE", settings.hostfile);
  for (const auto& [name, value] : common) {
    if (shared(name)) {
      command.env.emplace_back(name, *value);
    }
  }
  for (int rank = 0; rank < world; ++rank) {
    std::string exports;
    for (const auto& [name, value] : launches[static_cast<std::size_t>(rank)].env) {
      if (!shared(name)) {
        exports += fmt::format("export {}={}\n", name, shell_quote(value));
      }
    }
    command.env.emplace_back(fmt::format("DDL_SLURM_ENV_{}", rank), exports);
  }
  command.argv.insert(command.argv.end(), {"sh", "-c", rank_script(world), "ddl-rank"});
  const auto& argv = launches.front().argv;
  command.argv.insert(command.argv.end(), argv.begin(), argv.end());
  return command;
}

std::string dry_run_text(std::span<const RankLaunch> launches, const SrunSettings& settings) {
  auto command = build_srun_command(launches, settings);
  if (!command) {
    return fmt::format("srun: {}\n", command.error().message);
  }
  std::string out = "srun command (the environment carries every value, never the command line):\n";
  for (std::size_t i = 0; i < command->argv.size(); ++i) {
    out += fmt::format("{}{}{}", i == 0 ? "  " : "    ", shell_word(command->argv[i]),
                       i + 1 < command->argv.size() ? " \\\n" : "\n");
  }
  out += "SLURM_HOSTFILE (one host per rank):\n";
  for (const auto& launch : launches) {
    out += fmt::format("  {}\n", launch.host.name);
  }
  return out;
}

} // namespace ddl::slurm
