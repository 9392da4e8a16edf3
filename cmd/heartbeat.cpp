// SPDX-License-Identifier: MIT
// `ddl heartbeat`: from inside a rank, tells the hang watchdog that this rank
// made progress (src/session/heartbeat.hpp).
#include "cmd/command.hpp"
#include "src/session/heartbeat.hpp"

namespace ddl::cmd {

void add_heartbeat(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand(
      "heartbeat", "From inside a rank: tell the watchdog this rank made progress (uses DDL_RENDEZVOUS)");
  sub->footer("Exit 0 once the launcher took it; 3 when it cannot be reached or refuses it.\n\n"
              "Example (in a training loop, with [watchdog] progress = \"heartbeat\"):\n"
              "  subprocess.run([\"ddl\", \"heartbeat\"])");
  sub->callback([&selected] {
    selected = [] {
      auto sent = session::send_rank_heartbeat();
      return sent ? 0 : report(sent.error());
    };
  });
}

} // namespace ddl::cmd
