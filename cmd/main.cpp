// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cmd/command.hpp"
#include "ddl_version.hpp"
#include "src/util/log.hpp"
#include "src/util/text.hpp"

namespace {

// Subcommands a user may type; hidden ones (worker, rsh) are left out.
const std::vector<std::string> k_public_commands = {
    "bench", "completions", "heartbeat", "hosts", "init", "render", "run"};

// CLI11 answers an unknown subcommand with a generic message and its own exit
// code; ddl says "did you mean" and exits 2 instead.
int reject_unknown_command(const std::string& word) {
  std::string hint = ddl::did_you_mean(word, k_public_commands);
  ddl::print_error(fmt::format("unknown command '{}'{}", word,
                               hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
  fmt::print(stderr, "Run 'ddl --help' for the list of commands.\n");
  return 2;
}

bool is_known_command(const std::string& word) {
  for (const auto& name : k_public_commands) {
    if (word == name) {
      return true;
    }
  }
  return word == "worker" || word == "rsh";
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // Everything after the first "--" is the command to run, untouched by CLI11.
  std::vector<std::string> tail;
  if (auto dash = std::find(args.begin(), args.end(), "--"); dash != args.end()) {
    tail.assign(dash + 1, args.end());
    args.erase(dash, args.end());
  }
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !is_known_command(args[0])) {
    return reject_unknown_command(args[0]);
  }

  CLI::App app{"ddl: launch and supervise distributed deep-learning jobs", "ddl"};
  app.set_version_flag("-V,--version", std::string("ddl ") + DDL_VERSION);
  app.require_subcommand(1);
  ddl::cmd::Command selected;
  ddl::cmd::add_bench(app, selected);
  ddl::cmd::add_completions(app, selected);
  ddl::cmd::add_heartbeat(app, selected);
  ddl::cmd::add_hosts(app, selected);
  ddl::cmd::add_init(app, selected);
  ddl::cmd::add_render(app, selected);
  ddl::cmd::add_rsh(app, selected);
  ddl::cmd::add_run(app, selected);
  ddl::cmd::add_worker(app, selected);

  ddl::cmd::set_trailing_command(tail);
  // Where a usage error points to: the subcommand's --help when there is one.
  std::string help_for;
  if (!args.empty() && std::find(k_public_commands.begin(), k_public_commands.end(), args[0]) !=
                           k_public_commands.end()) {
    help_for = args[0] + " ";
  }
  try {
    std::reverse(args.begin(), args.end());
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    ddl::print_error(e.what());
    fmt::print(stderr, "Run 'ddl {}--help' for usage.\n", help_for);
    return 2;
  }
  return selected ? selected() : 2;
}
