// SPDX-License-Identifier: MIT
#include "backends/mpirun/mpirun_command.hpp"

#include <algorithm>
#include <filesystem>
#include <unistd.h>
#include <map>
#include <optional>

#include <fmt/core.h>

#include "src/util/text.hpp"

#include "src/util/process.hpp"

namespace ddl::mpirun {

namespace {

// Names mpirun sets in every rank itself.
bool is_mpirun_own(std::string_view name) {
  return name.starts_with("OMPI_") || name.starts_with("PMIX_");
}

} // namespace

std::string rank_script(int world_size) {
  return fmt::format(
      "case ${{OMPI_COMM_WORLD_RANK:-}} in ''|*[!0-9]*) echo 'ddl: not started by mpirun' >&2; exit 125 ;; esac\n"
      "eval \"__ddl_e=\\${{DDL_MPI_ENV_$OMPI_COMM_WORLD_RANK:-}}\"\n"
      "__ddl_i=0\n"
      "while [ \"$__ddl_i\" -lt {} ]; do unset \"DDL_MPI_ENV_$__ddl_i\"; __ddl_i=$((__ddl_i + 1)); done\n"
      "eval \"$__ddl_e\" || exit 125\n"
      // Meant for mpirun's rsh agent, not the ranks.
      "unset __ddl_e __ddl_i DDL_RSH_TRANSPORT DDL_RSH_JOB\n"
      // A watchdog: if mpirun (or its daemon) goes away without ending this
      // rank, end the rank's process group (TERM, then KILL).
      "__ddl_p=$PPID\n"
      "( while kill -0 \"$__ddl_p\" 2>/dev/null; do sleep 1; done\n"
      "  kill -s TERM -- -$$ 2>/dev/null; sleep 2; kill -s KILL -- -$$ 2>/dev/null ) </dev/null >/dev/null 2>&1 &\n"
      "__ddl_w=$!\n"
      "\"$@\"\n"
      "__ddl_rc=$?\n"
      "kill \"$__ddl_w\" 2>/dev/null\n"
      "[ \"$__ddl_rc\" -eq 0 ] || printf '{}%s exit %s\\n' \"$OMPI_COMM_WORLD_RANK\" \"$__ddl_rc\" >&2\n"
      "exit \"$__ddl_rc\"\n",
      world_size, k_rank_exit_marker);
}

Result<MpirunCommand> build_mpirun_command(std::span<const RankLaunch> launches, const MpirunSettings& settings) {
  if (launches.empty()) {
    return fail(ExitCode::usage, "mpirun: no ranks to start");
  }
  // name -> value when every rank has it with this value, else nullopt.
  std::map<std::string, std::optional<std::string>> common;
  std::vector<std::string> order;
  std::map<std::string, int> holders;
  for (const auto& launch : launches) {
    for (const auto& [name, value] : launch.env) {
      if (is_mpirun_own(name)) {
        continue;
      }
      if (value.find('\0') != std::string::npos) {
        return fail(ExitCode::usage, fmt::format("env {} holds a NUL byte", name));
      }
      auto [it, inserted] = common.emplace(name, value);
      if (inserted) {
        order.push_back(name);
      } else if (it->second && *it->second != value) {
        it->second.reset();
      }
      ++holders[name];
    }
  }
  const int world = static_cast<int>(launches.size());
  MpirunCommand command;
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
  for (const auto& name : order) {
    if (common[name] && holders[name] == world) {
      command.argv.insert(command.argv.end(), {"-x", name});
      command.env.emplace_back(name, *common[name]);
    }
  }
  for (int rank = 0; rank < world; ++rank) {
    std::string exports;
    for (const auto& [name, value] : launches[static_cast<std::size_t>(rank)].env) {
      auto it = common.find(name);
      if (it != common.end() && !(it->second && holders[name] == world)) {
        exports += fmt::format("export {}={}\n", name, shell_quote(value));
      }
    }
    std::string blob = fmt::format("DDL_MPI_ENV_{}", rank);
    command.argv.insert(command.argv.end(), {"-x", blob});
    command.env.emplace_back(blob, exports);
  }
  command.env.emplace_back("DDL_RSH_TRANSPORT", settings.rsh_transport);
  command.env.emplace_back("DDL_RSH_JOB", settings.job_file);
  command.argv.insert(command.argv.end(), {"sh", "-c", rank_script(world), "ddl-rank"});
  const auto& argv = launches.front().argv;
  command.argv.insert(command.argv.end(), argv.begin(), argv.end());
  return command;
}

std::string mpirun_workdir(std::span<const RankLaunch> launches) {
  return launches.empty() || launches.front().workdir_is_default ? "" : launches.front().workdir;
}

std::string dry_run_text(std::span<const RankLaunch> launches, const std::string& rsh_transport,
                         const std::vector<std::string>& extra_args) {
  MpirunSettings settings;
  settings.hostfile = "<hostfile>";
  settings.ddl_path = own_executable_path();
  settings.workdir = mpirun_workdir(launches);
  settings.as_root = ::geteuid() == 0;
  settings.rsh_transport = rsh_transport;
  settings.extra_args = extra_args;
  auto command = build_mpirun_command(launches, settings);
  if (!command) {
    return fmt::format("mpirun: {}\n", command.error().message);
  }
  std::string out = "mpirun command (values of -x NAME come from the environment, never the command line):\n";
  for (std::size_t i = 0; i < command->argv.size(); ++i) {
    out += fmt::format("{}{}{}", i == 0 ? "  " : "    ", shell_word(command->argv[i]),
                       i + 1 < command->argv.size() ? " \\\n" : "\n");
  }
  return out;
}

} // namespace ddl::mpirun
