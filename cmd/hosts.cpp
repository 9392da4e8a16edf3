// SPDX-License-Identifier: MIT
#include <fmt/core.h>

#include "cmd/command.hpp"

namespace ddl::cmd {

void add_hosts(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand("hosts", "hosts (not implemented yet)");
  sub->callback([&selected] {
    selected = [] {
      fmt::print(stderr, "ddl: error: 'hosts' is not implemented yet\n");
      return 2;
    };
  });
}

} // namespace ddl::cmd
