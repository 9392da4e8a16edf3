// SPDX-License-Identifier: MIT
#include <memory>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "src/util/embedded.hpp"

namespace ddl::cmd {

namespace {

// The scripts under completions/, built into the binary, so that what ddl
// prints is byte for byte what `cmake --install` installs.
int print_completions(const std::string& shell) {
  std::string name = shell == "bash"  ? "completions/ddl.bash"
                     : shell == "zsh" ? "completions/_ddl"
                                      : "completions/ddl.fish";
  auto script = embedded_file(name);
  if (!script) {
    return report(Error{ExitCode::usage, fmt::format("this ddl was built without {}", name)});
  }
  fmt::print("{}", *script);
  return 0;
}

} // namespace

void add_completions(CLI::App& app, Command& selected) {
  auto shell = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("completions", "Print a shell completion script (bash, zsh or fish)");
  sub->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  sub->footer("Example:\n  ddl completions bash > ~/.local/share/bash-completion/completions/ddl");
  sub->callback([&selected, shell] { selected = [shell] { return print_completions(*shell); }; });
}

} // namespace ddl::cmd
