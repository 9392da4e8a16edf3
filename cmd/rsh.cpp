// SPDX-License-Identifier: MIT
#include <fmt/core.h>

#include "cmd/command.hpp"

namespace ddl::cmd {

void add_rsh(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand("rsh", "");
  sub->group("");  // hidden: used by ddl itself
  sub->callback([&selected] {
    selected = [] {
      fmt::print(stderr, "ddl: error: 'rsh' is not implemented yet\n");
      return 2;
    };
  });
}

} // namespace ddl::cmd
