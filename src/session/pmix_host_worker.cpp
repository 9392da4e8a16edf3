// SPDX-License-Identifier: MIT
#include "src/session/pmix_host_worker.hpp"

#include <unistd.h>

#include <cstdlib>
#include <memory>

#include <fmt/core.h>

#include "rendezvous/client.hpp"
#include "src/pmix/host.hpp"
#include "src/util/duration.hpp"
#include "src/util/net.hpp"
#include "src/util/process.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl::session {

namespace {

constexpr Millis k_join_timeout{300'000};

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

} // namespace

Result<PmixHostEnd> run_pmix_host_worker(const PmixHostFlags& given, const std::vector<std::string>& argv) {
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
  if (flags.ranks < 1 || argv.empty()) {
    return fail(ExitCode::usage, "usage: ddl worker pmix-host --ranks N -- PROGRAM [ARGS...]");
  }
  pmix::HostRun run;
  run.argv = argv;
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
    return PmixHostEnd{result->code, rank_tag::verdict_line(result->reason), shared};
  }
  if (shared) {
    shared->close();  // a clean leave: no fence is in flight after success
  }
  return PmixHostEnd{result->code, "", shared};
}


} // namespace ddl::session
