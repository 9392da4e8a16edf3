// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cmd/command.hpp"
#include "cmd/habits.hpp"
#include "cmd/persona.hpp"
#include "ddl_version.hpp"
#include "src/util/log.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace {

// Subcommands a user may type; hidden ones (worker, rsh, pin) are left out.
const std::vector<std::string> k_public_commands = {
    "bench",  "completions", "deepspeed", "heartbeat", "horovodrun", "hosts", "init",  "logs",
    "mpirun", "ps",          "render",    "run",       "signal",     "stop",  "sweep", "torchrun"};

// CLI11 answers an unknown subcommand with a generic message and its own exit
// code; ddl says "did you mean" and exits 2 instead.
int reject_unknown_command(const std::string& word) {
  std::string hint = ddl::did_you_mean(word, k_public_commands);
  int code = ddl::cmd::report(ddl::Error{
      ddl::ExitCode::usage, fmt::format("unknown command '{}'{}", word,
                                        hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint))});
  fmt::print(stderr, "Run 'ddl --help' for the list of commands.\n");
  return code;
}

// A command-line error: the message, then where to read the usage (the
// subcommand's --help when there is one); exit 2.
int usage_error(const std::string& message, const std::vector<std::string>& args) {
  int code = ddl::cmd::report(ddl::Error{ddl::ExitCode::usage, message});
  std::string help_for;
  if (!args.empty() && std::find(k_public_commands.begin(), k_public_commands.end(), args[0]) !=
                           k_public_commands.end()) {
    help_for = args[0] + " ";
  }
  fmt::print(stderr, "Run 'ddl {}--help' for usage.\n", help_for);
  return code;
}

bool is_known_command(const std::string& word) {
  for (const auto& name : k_public_commands) {
    if (word == name) {
      return true;
    }
  }
  return word == "worker" || word == "rsh" || word == "pin";
}

} // namespace

namespace {

// ddl's first code, before any static initializer or library constructor
// (DT_PREINIT_ARRAY) and so before any thread: a Ctrl-C or SIGTERM from now
// on waits for the handlers of the command that takes it (stop::arm()), or
// for main to give the others back their default actions.
void hold_signals_first(int /*argc*/, char** /*argv*/, char** /*envp*/) { ddl::stop::hold_signals(); }
[[gnu::section(".preinit_array"), gnu::used]] void (*g_hold_signals_first)(int, char**, char**) =
    hold_signals_first;

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // `ddl torchrun ...`: the launcher's own words, read by its personality.
  if (!args.empty()) {
    if (const auto* persona = ddl::persona::find_persona(args[0])) {
      return ddl::cmd::run_persona(*persona, std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !is_known_command(args[0])) {
    ddl::cmd::set_json_errors(std::find(args.begin(), args.end(), "--json") != args.end());
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
  ddl::cmd::add_live(app, selected);
  ddl::cmd::add_pin(app, selected);
  ddl::cmd::add_render(app, selected);
  ddl::cmd::add_rsh(app, selected);
  ddl::cmd::add_run(app, selected);
  ddl::cmd::add_sweep(app, selected);
  ddl::cmd::add_worker(app, selected);
  ddl::cmd::add_personas(app);
  ddl::cmd::keep_leftover_words(app);
  // The command to run (after "--", or `ddl run`'s program), untouched by CLI11.
  std::vector<std::string> tail = ddl::cmd::take_command(app, args);
  ddl::cmd::set_json_errors(std::find(args.begin(), args.end(), "--json") != args.end());
  if (args.empty()) {
    fmt::print("{}", app.help());
    return 0;
  }
  if (auto translated = ddl::cmd::translate_habits(app, args); !translated) {
    return usage_error(translated.error().message, args);
  }

  ddl::cmd::set_trailing_command(tail);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what(), args);
  }
  if (auto checked = ddl::cmd::check_leftover_words(app); !checked) {
    return usage_error(checked.error().message, args);
  }
  if (!ddl::cmd::loads_a_job(app)) {
    ddl::stop::release_signals();
  }
  return selected ? selected() : 2;
}
