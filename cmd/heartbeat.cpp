// SPDX-License-Identifier: MIT
// `ddl heartbeat`: from inside a rank, tells the hang watchdog ([watchdog])
// that this rank made progress, through the job's rendezvous.
#include <memory>

#include "cmd/command.hpp"
#include "rendezvous/client.hpp"

namespace ddl::cmd {

namespace {

constexpr Millis k_heartbeat_timeout{10'000};

Result<int> send_one() {
  auto who = rendezvous::heartbeat_info_from_env();
  if (!who) {
    return fail(ExitCode::usage, "heartbeat: " + who.error().message + " (run it inside a rank of `ddl run`)");
  }
  if (auto sent = rendezvous::send_heartbeat(*who, k_heartbeat_timeout); !sent) {
    return fail(sent.error());
  }
  return 0;
}

} // namespace

void add_heartbeat(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand(
      "heartbeat", "From inside a rank: tell the watchdog this rank made progress (uses DDL_RENDEZVOUS)");
  sub->footer("Exit 0 once the launcher took it; 3 when it cannot be reached or refuses it.\n\n"
              "Example (in a training loop, with [watchdog] progress = \"heartbeat\"):\n"
              "  subprocess.run([\"ddl\", \"heartbeat\"])");
  sub->callback([&selected] {
    selected = [] {
      auto code = send_one();
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
