// SPDX-License-Identifier: MIT
// `ddl rsh HOST COMMAND...`: hidden; Open MPI's plm_rsh_agent for the mpirun
// backend (src/session/rsh_agent.hpp). mpirun calls it to start its daemon
// (orted) on each remote host. When this process ends (mpirun gone:
// PR_SET_PDEATHSIG), the remote command ends with it.
#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

#include "cmd/command.hpp"
#include "src/session/rsh_agent.hpp"
#include "src/util/log.hpp"

namespace ddl::cmd {

namespace {

int run_rsh(const std::vector<std::string>& args) {
  pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) {
    return 143;
  }
  if (args.size() < 2) {
    print_error("usage: ddl rsh HOST COMMAND... (used by the mpirun backend)");
    return 2;
  }
  set_log_level(0, false);  // stdout belongs to the remote command
  auto end = session::run_rsh_agent(args[0], {args.begin() + 1, args.end()});
  if (!end) {
    return report(end.error());
  }
  if (!end->launch_error.empty()) {
    print_error(end->launch_error);
    return to_int(ExitCode::launch);
  }
  return end->code;
}

} // namespace

void add_rsh(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand("rsh", "");
  sub->group("");  // hidden: used by ddl itself
  sub->prefix_command();
  sub->allow_extras();
  sub->callback([&selected, sub] {
    selected = [args = sub->remaining()] { return run_rsh(args); };
  });
}

} // namespace ddl::cmd
