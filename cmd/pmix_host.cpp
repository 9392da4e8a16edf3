// SPDX-License-Identifier: MIT
// `ddl worker pmix-host --ranks N -- PROGRAM ARGS...` (hidden): this host's
// PMIx server and ranks (src/session/pmix_host_worker.hpp), before the
// backends host it themselves (issue 33).
#include <memory>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "src/session/pmix_host_worker.hpp"

namespace ddl::cmd {

namespace {

Result<int> run_pmix_host(const session::PmixHostFlags& flags) {
  auto end = session::run_pmix_host_worker(flags, trailing_command());
  if (!end) return fail(end.error());
  if (!end->verdict.empty()) fmt::print(stderr, "{}\n", end->verdict);
  return end->code;
}

} // namespace

void add_pmix_host_worker(CLI::App& worker, Command& selected) {
  auto flags = std::make_shared<session::PmixHostFlags>();
  CLI::App* sub = worker.add_subcommand("pmix-host", "This host's PMIx server and MPI ranks");
  sub->add_option("--ranks", flags->ranks, "How many ranks this host starts");
  sub->add_option("--host-ranks", flags->host_ranks, "Every host's rank count (2,2,3): this host's is DDL_RANK's");
  sub->add_flag("--rank-prefix", flags->rank_prefix, "Each output line starts \"[RANK] \"");
  sub->add_option("--lines", flags->lines, "The version of the tagged lines ddl reads back");
  sub->add_option("--grace", flags->grace, "After the stop signal, SIGKILL");
  sub->add_option("--fence-timeout", flags->fence_timeout, "How long a fence may wait for the hosts");
  sub->callback([&selected, flags] {
    selected = [flags] {
      auto code = run_pmix_host(*flags);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
