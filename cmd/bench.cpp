// SPDX-License-Identifier: MIT
#include <fmt/core.h>

#include "cmd/command.hpp"

namespace ddl::cmd {

void add_bench(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand("bench", "bench (not implemented yet)");
  sub->callback([&selected] {
    selected = [] {
      fmt::print(stderr, "ddl: error: 'bench' is not implemented yet\n");
      return 2;
    };
  });
}

} // namespace ddl::cmd
