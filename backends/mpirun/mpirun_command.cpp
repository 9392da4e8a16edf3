// SPDX-License-Identifier: MIT
#include "backends/mpirun/mpirun_command.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl::mpirun {

namespace {

// Names mpirun sets in every rank itself.
bool is_mpirun_own(std::string_view name) {
  return name.starts_with("OMPI_") || name.starts_with("PMIX_");
}

// Names Hydra sets in every rank itself (its PMI wire-up and ranks).
bool is_hydra_own(std::string_view name) {
  return name.starts_with("PMI_") || name.starts_with("MPIR_") || name.starts_with("HYDRA_") ||
         name == "MPI_LOCALRANKID" || name == "MPI_LOCALNRANKS";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

// mpirun's own options, up to the job's: Open MPI's or Hydra's spellings.
std::vector<std::string> launcher_options(const MpirunSettings& settings, int world, const std::string& stdin_target) {
  const bool hydra = settings.flavour == MpiFlavour::mpich;
  std::vector<std::string> argv;
  if (hydra) {
    argv = {settings.mpirun, "-f", settings.hostfile, "-n", std::to_string(world), "-prepend-rank",
            "-launcher", "rsh", "-launcher-exec", settings.rsh_exec};
    if (!settings.launcher_address.empty() && std::ranges::find(settings.extra_args, "-localhost") ==
                                                   settings.extra_args.end()) {
      argv.insert(argv.end(), {"-localhost", settings.launcher_address});
    }
  } else {
    argv = {settings.mpirun, "--hostfile", settings.hostfile, "-np", std::to_string(world), "--tag-output"};
    if (settings.as_root) {
      argv.push_back("--allow-run-as-root");
    }
    argv.insert(argv.end(), {"--stdin", stdin_target});
    argv.insert(argv.end(), {"--mca", "plm_rsh_agent", settings.ddl_path + " rsh", "--mca", "plm_rsh_no_tree_spawn",
                             "1", "--mca", "orte_leave_session_attached", "1"});
  }
  if (!settings.workdir.empty()) {
    argv.insert(argv.end(), {hydra ? "-wdir" : "--wdir", settings.workdir});
  }
  argv.insert(argv.end(), settings.extra_args.begin(), settings.extra_args.end());
  return argv;
}

// Whether the plan deals ranks over the hosts (--map-by node): a host's
// ranks are not adjacent.
bool dealt_by_node(std::span<const RankLaunch> launches) {
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const std::string& name = launches[i].host.name;
    if (i > 0 && name == launches[i - 1].host.name) {
      continue;
    }
    if (std::ranges::find(seen, name) != seen.end()) {
      return true;
    }
    seen.push_back(name);
  }
  return false;
}

} // namespace

std::string hydra_rsh_script(const std::string& ddl_path) {
  return fmt::format("#!/bin/sh\nexec {} rsh \"$@\"\n", shell_quote(ddl_path));
}

std::string rank_script(int world_size, const RankScript& script) {
  return rank_script_head(script, world_size, "DDL_RSH_TRANSPORT DDL_RSH_JOB DDL_RSH_SSH_CONFIG") +
         // A watchdog: if mpirun (or its daemon) goes away without ending this
         // rank, end the rank's process group (TERM, then KILL). Ended, it
         // ends its sleep too and waits for it: a TERM that lands in the sleep
         // between its fork and its exec is lost (the shell's handler is still
         // in place there), and the sleep would outlive the rank by a second.
         "__ddl_p=$PPID\n"
         "( trap \"kill \\$! 2>/dev/null; wait \\$!; exit 0\" TERM\n"
         "  while kill -0 \"$__ddl_p\" 2>/dev/null; do sleep 1 & wait $!; done\n"
         "  kill -s TERM -- -$$ 2>/dev/null; sleep 2 & wait $!; kill -s KILL -- -$$ 2>/dev/null ) </dev/null >/dev/null 2>&1 &\n"
         "__ddl_w=$!\n"
         // Open MPI signals the rank's whole process group: SIGUSR1 and
         // SIGUSR2 are the rank's to answer, not the end of this wrapper.
         "trap : USR1 USR2\n"
         "\"$@\"\n"
         "__ddl_rc=$?\n"
         "kill \"$__ddl_w\" 2>/dev/null && wait \"$__ddl_w\"\n" +
         rank_script_exit_line(script) + "exit \"$__ddl_rc\"\n";
}

Result<LauncherCommand> build_mpirun_command(std::span<const RankLaunch> launches, const MpirunSettings& settings) {
  if (launches.empty()) {
    return fail(ExitCode::usage, "mpirun: no ranks to start");
  }
  const bool hydra = settings.flavour == MpiFlavour::mpich;
  const RankScript& script = hydra ? k_hydra_rank_script : k_rank_script;
  auto env = split_gang_env(launches, hydra ? is_hydra_own : is_mpirun_own);
  if (!env) {
    return fail(env.error());
  }
  const std::string stdin_target = launcher_stdin_target(launches);
  if (stdin_target == "all") {
    // Open MPI 4.1's --stdin all gives no rank a byte, and mpirun never ends.
    return fail(ExitCode::usage, "--stdin all: mpirun does not give every rank its stdin (Open MPI's --stdin all "
                                 "delivers nothing; MPICH's mpiexec feeds rank 0 only); name one rank, or use "
                                 "backend local, ssh or slurm");
  }
  if (hydra && stdin_target != "0" && stdin_target != "none") {
    return fail(ExitCode::usage, fmt::format("--stdin {}: MPICH's mpiexec gives stdin to rank 0 only; use --stdin 0 "
                                             "or none, or backend local, ssh or Open MPI's mpirun",
                                             stdin_target));
  }
  const bool by_node = dealt_by_node(launches);
  if (hydra && by_node) {
    return fail(ExitCode::usage, "--map-by node: MPICH's mpiexec numbers ranks host by host here; use Open MPI's "
                                 "mpirun, or backend local, ssh or slurm");
  }
  const int world = static_cast<int>(launches.size());
  LauncherCommand command;
  command.note = hydra ? "values of -genvlist NAMES come from the environment, never the command line"
                       : "values of -x NAME come from the environment, never the command line";
  command.argv = launcher_options(settings, world, stdin_target);
  if (by_node) {
    // The hostfile holds each host's count of ranks: mpirun deals them as the plan does.
    command.argv.insert(command.argv.end(), {"--map-by", "node"});
  }
  // Variables forwarded by name: the shared ones, then each rank's blob.
  std::vector<std::string> names;
  for (const auto& [name, value] : env->shared) {
    names.push_back(name);
    command.env.emplace_back(name, value);
  }
  for (int rank = 0; rank < world; ++rank) {
    names.push_back(fmt::format("{}{}", script.env_prefix, rank));
    command.env.emplace_back(names.back(), env->ranks[static_cast<std::size_t>(rank)]);
  }
  if (hydra) {
    command.argv.insert(command.argv.end(), {"-genvlist", joined(names)});
  } else {
    for (const auto& name : names) {
      command.argv.insert(command.argv.end(), {"-x", name});
    }
  }
  command.env.emplace_back("DDL_RSH_TRANSPORT", settings.rsh_transport);
  command.env.emplace_back("DDL_RSH_JOB", settings.job_file);
  command.env.emplace_back("DDL_RSH_SSH_CONFIG", settings.ssh_config);
  command.argv.insert(command.argv.end(), {"sh", "-c", rank_script(world, script), "ddl-rank"});
  const auto& argv = launches.front().argv;
  command.argv.insert(command.argv.end(), argv.begin(), argv.end());
  return command;
}

} // namespace ddl::mpirun
