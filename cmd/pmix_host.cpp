// SPDX-License-Identifier: MIT
// `ddl worker pmix-host --ranks N -- PROGRAM ARGS...` (hidden): this host's
// PMIx server and ranks (src/pmix/host.hpp), before the backends host it
// themselves (issue 33). Alone it runs a job of one host. Started as the
// ranks of `ddl run` (one per host), each joins the job rendezvous as that
// rank: the hosts' names and rank counts, then every PMIx fence, go through
// its allgather.
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "rendezvous/client.hpp"
#include "src/pmix/host.hpp"
#include "src/util/duration.hpp"
#include "src/util/net.hpp"
#include "src/util/process.hpp"
#include "src/util/rank_tag.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl::cmd {

namespace {

constexpr Millis k_join_timeout{300'000};

struct PmixHostFlags {
  int ranks = 1;
  std::string host_ranks;  // "2,2,3": each host's --ranks, picked by DDL_RANK (ddl run --mpi pmix)
  bool rank_prefix = false;
  int lines = rank_tag::k_version;  // the version of the lines ddl reads back (rank_tag)
  std::string grace = "10s";
  std::string fence_timeout = "8760h";
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// "NAME\nRANKS\nNSPACE": what each host tells the others at the start.
std::string describe_host(const pmix::HostShare& share, const std::string& nspace) {
  return fmt::format("{}\n{}\n{}", share.name, share.ranks, nspace);
}

Result<pmix::JobLayout> layout_from(const std::vector<std::string>& hosts, int this_host) {
  pmix::JobLayout layout;
  layout.this_host = this_host;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    auto fields = split(hosts[i], '\n');
    auto ranks = fields.size() == 3 ? parse_int(fields[1]) : std::nullopt;
    if (!ranks) {
      return fail(ExitCode::launch, fmt::format("PMIx host {} sent a malformed description", i));
    }
    layout.hosts.push_back({fields[0], static_cast<int>(*ranks)});
    if (i == 0) {
      layout.nspace = fields[2];  // host 0 names the namespace for all
    }
  }
  pmix::make_host_names_unique(layout.hosts);
  return layout;
}

// The environment of the ranks: ours, and our place in the gang of hosts as
// DDL_HEARTBEAT_RANK and _WORLD_SIZE (the ranks are not members of the job
// rendezvous' world, the hosts are: a rank's `ddl heartbeat` speaks for its
// host). Their own DDL_RANK and friends are set per rank.
std::vector<std::string> rank_base_env() {
  return environment_with({"DDL_HEARTBEAT_RANK=" + env_or("DDL_RANK", "0"),
                           "DDL_HEARTBEAT_WORLD_SIZE=" + env_or("DDL_WORLD_SIZE", "1")});
}

// --host-ranks "2,2,3": this host's entry, by its rank in the gang of hosts.
Result<int> ranks_of_this_host(const PmixHostFlags& flags) {
  if (flags.host_ranks.empty()) {
    return flags.ranks;
  }
  auto entries = split(flags.host_ranks, ',');
  auto host = parse_int(env_or("DDL_RANK", "0"));
  auto hosts = parse_int(env_or("DDL_WORLD_SIZE", "1"));
  if (!host || !hosts || *hosts != static_cast<long long>(entries.size()) || *host < 0 || *host >= *hosts) {
    return fail(ExitCode::usage, fmt::format("--host-ranks '{}' does not fit host {} of {} (DDL_RANK, DDL_WORLD_SIZE)",
                                             flags.host_ranks, env_or("DDL_RANK", "0"), env_or("DDL_WORLD_SIZE", "1")));
  }
  auto ranks = parse_int(entries[static_cast<std::size_t>(*host)]);
  if (!ranks) {
    return fail(ExitCode::usage, fmt::format("--host-ranks '{}': not a list of counts", flags.host_ranks));
  }
  return static_cast<int>(*ranks);
}

Result<int> run_pmix_host(const PmixHostFlags& given) {
  PmixHostFlags flags = given;
  auto ranks = ranks_of_this_host(flags);
  if (!ranks) return fail(ranks.error());
  flags.ranks = *ranks;
  if (auto same = rank_tag::check_version(flags.lines); !same) return fail(same.error());
  if (auto armed = stop::arm(); !armed) return fail(armed.error());
  auto grace = parse_duration(flags.grace);
  auto fence_timeout = parse_duration(flags.fence_timeout);
  if (!grace || !fence_timeout) {
    return fail(ExitCode::usage, "--grace and --fence-timeout take a duration such as 10s");
  }
  if (flags.ranks < 1 || trailing_command().empty()) {
    return fail(ExitCode::usage, "usage: ddl worker pmix-host --ranks N -- PROGRAM [ARGS...]");
  }
  pmix::HostRun run;
  run.argv = trailing_command();
  run.env = rank_base_env();
  run.grace = *grace;
  run.rank_prefix = flags.rank_prefix;
  std::string name = net::own_hostname();
  pmix::HostShare mine{name.empty() ? "localhost" : name, flags.ranks};
  std::string nspace = pmix::job_namespace(env_or("DDL_JOB", std::to_string(::getpid())),
                                           env_or("DDL_ATTEMPT", "0"));
  std::vector<std::string> hosts{describe_host(mine, nspace)};
  int this_host = 0;
  std::shared_ptr<rendezvous::Client> shared;  // the fences' thread may outlive us
  if (std::atoi(env_or("DDL_WORLD_SIZE", "1").c_str()) > 1) {
    auto who = rendezvous::join_info_from_env();
    if (!who) return fail(who.error());
    auto client = rendezvous::Client::connect(*who, k_join_timeout);
    if (!client) return fail(client.error());
    shared = std::make_shared<rendezvous::Client>(std::move(*client));
    auto all = shared->allgather(hosts.front(), k_join_timeout);
    if (!all) return fail(all.error());
    hosts = std::move(*all);
    this_host = who->rank;
    run.allgather = [shared, timeout = *fence_timeout](const std::string& value) {
      return shared->allgather(value, timeout);
    };
  }
  auto layout = layout_from(hosts, this_host);
  if (!layout) return fail(layout.error());
  run.layout = std::move(*layout);
  auto result = pmix::run_host(run);
  if (!result) return fail(result.error());
  // ddl reads whom it blames. A stop that ddl sent (its --timeout, its
  // Ctrl-C) is ddl's to report, not a rank's failure; run by hand, it is said.
  const bool ddls_own_stop = result->told_to_stop && std::getenv("DDL_JOB") != nullptr;
  if (result->code != 0 && !ddls_own_stop) {
    fmt::print(stderr, "{}\n", rank_tag::verdict_line(result->reason));
  } else if (shared) {
    shared->close();  // a clean leave: no fence is in flight after success
  }
  return result->code;
}

} // namespace

void add_pmix_host_worker(CLI::App& worker, Command& selected) {
  auto flags = std::make_shared<PmixHostFlags>();
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
