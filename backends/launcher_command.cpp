// SPDX-License-Identifier: MIT
#include "backends/launcher_command.hpp"

#include <map>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl {

Result<GangEnv> split_gang_env(std::span<const RankLaunch> launches,
                               const std::function<bool(std::string_view)>& skip) {
  // name -> value when every rank has it with this value, else nullopt.
  std::map<std::string, std::optional<std::string>> common;
  std::map<std::string, std::size_t> holders;
  std::vector<std::string> order;
  for (const auto& launch : launches) {
    for (const auto& [name, value] : launch.env) {
      if (skip && skip(name)) {
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
  auto shared = [&](const std::string& name) { return common[name] && holders[name] == launches.size(); };
  GangEnv env;
  for (const auto& name : order) {
    if (shared(name)) {
      env.shared.emplace_back(name, *common[name]);
    }
  }
  for (const auto& launch : launches) {
    std::string exports;
    for (const auto& [name, value] : launch.env) {
      if (common.contains(name) && !shared(name)) {
        exports += fmt::format("export {}={}\n", name, shell_quote(value));
      }
    }
    env.ranks.push_back(std::move(exports));
  }
  return env;
}

std::string launcher_workdir(std::span<const RankLaunch> launches) {
  return launches.empty() || launches.front().workdir_is_default ? "" : launches.front().workdir;
}

std::string rank_script_head(const RankScript& script, int world_size, std::string_view unset,
                             std::string_view first) {
  return fmt::format(
      "case ${{{0}:-}} in ''|*[!0-9]*) echo 'ddl: not started by {1}' >&2; exit 125 ;; esac\n"
      "{2}"
      "eval \"__ddl_e=\\${{{3}${0}:-}}\"\n"
      "__ddl_i=0\n"
      "while [ \"$__ddl_i\" -lt {4} ]; do unset \"{3}$__ddl_i\"; __ddl_i=$((__ddl_i + 1)); done\n"
      "eval \"$__ddl_e\" || exit 125\n"
      "unset __ddl_e __ddl_i{5}{6}\n",
      script.rank_variable, script.launcher, first, script.env_prefix, world_size, unset.empty() ? "" : " ",
      unset);
}

std::string rank_script_exit_line(const RankScript& script) {
  return fmt::format("[ \"$__ddl_rc\" -eq 0 ] || printf '{}%s exit %s\\n' \"${}\" \"$__ddl_rc\" >&2\n",
                     script.exit_marker, script.rank_variable);
}

std::optional<std::pair<int, int>> parse_exit_marker(std::string_view line, std::string_view exit_marker) {
  line = trim(line);
  if (!line.starts_with(exit_marker)) {
    return std::nullopt;
  }
  line.remove_prefix(exit_marker.size());
  constexpr std::string_view k_exit = " exit ";
  std::size_t at = line.find(k_exit);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  auto rank = parse_int(line.substr(0, at));
  auto code = parse_int(line.substr(at + k_exit.size()));
  if (!rank || !code || *rank > 1'000'000'000 || *code > 1'000'000'000) {
    return std::nullopt;
  }
  return std::pair{static_cast<int>(*rank), static_cast<int>(*code)};
}

std::string launcher_dry_run(std::string_view launcher, const LauncherCommand& command) {
  std::string out = fmt::format("{} command ({}):\n", launcher, command.note);
  for (std::size_t i = 0; i < command.argv.size(); ++i) {
    out += fmt::format("{}{}{}", i == 0 ? "  " : "    ", shell_word(command.argv[i]),
                       i + 1 < command.argv.size() ? " \\\n" : "\n");
  }
  return out + command.appendix;
}

std::string launcher_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& word : argv) {
    out += (out.empty() ? "" : " ") + shell_word(word);
  }
  return out;
}

std::string launcher_stdin_target(std::span<const RankLaunch> launches) {
  std::vector<int> readers;
  for (const auto& launch : launches) {
    if (launch.reads_stdin) {
      readers.push_back(launch.rank);
    }
  }
  if (readers.empty()) {
    return "none";
  }
  if (readers.size() == 1) {
    return std::to_string(readers.front());
  }
  return "all";
}

} // namespace ddl
