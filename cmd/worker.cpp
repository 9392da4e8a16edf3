// SPDX-License-Identifier: MIT
// `ddl worker allreduce ...`: one rank of `ddl bench allreduce`, and
// `ddl worker pmix-host` (cmd/pmix_host.cpp) and `ddl worker ssh-relay`
// (backends/ssh/relay_server.hpp). Hidden: used by ddl itself.
#include <cstdlib>
#include <memory>

#include <fmt/core.h>

#include "backends/ssh/relay_server.hpp"
#include "cmd/bench_options.hpp"
#include "cmd/command.hpp"
#include "ddl_version.hpp"
#include "rendezvous/client.hpp"
#include "src/collectives/bench_worker.hpp"
#include "src/collectives/preflight_worker.hpp"
#include "src/util/net.hpp"
#include "src/util/text.hpp"

namespace ddl::cmd {

namespace {

constexpr Millis k_exchange_timeout{300'000};

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  auto value = text != nullptr ? parse_int(text) : std::nullopt;
  return value ? static_cast<int>(*value) : fallback;
}

Result<int> run_allreduce_worker(const BenchFlags& flags) {
  auto options = worker_options(flags);
  if (!options) {
    return fail(options.error());
  }
  auto who = rendezvous::join_info_from_env();
  if (!who) {
    return fail(who.error());
  }
  auto client = rendezvous::Client::connect(*who, k_exchange_timeout);
  if (!client) {
    return fail(client.error());
  }
  coll::WorkerContext context;
  context.rank = who->rank;
  context.world = who->world_size;
  context.local_rank = env_int("DDL_LOCAL_RANK", 0);
  const char* host = std::getenv("DDL_HOST");
  context.host = host != nullptr ? host : "localhost";
  context.hostname = net::own_hostname();  // as nccl-tests prints it: where the rank ran
  if (auto endpoint = net::parse_endpoint(who->endpoint)) {
    context.rendezvous_host = endpoint->host;
  }
  context.version = DDL_VERSION;
  context.allgather = [&client](const std::string& mine) {
    return client->allgather(mine, k_exchange_timeout);
  };
  context.publish = [&client](const std::string& key, const std::string& value) {
    return client->set(key, value);
  };
  auto code = coll::run_bench_worker(*options, context);
  if (code) {
    client->close();
  }
  return code;
}

struct PreflightFlags {
  std::string pairs;
  long window_ms = 50;
  long budget_ms = 3'000;
  bool sequential = false;
};

// One host of the preflight gate's network check (src/session/preflight_gate.hpp).
Result<int> run_preflight_worker(const PreflightFlags& flags) {
  auto pairs = coll::parse_preflight_pairs(flags.pairs);
  if (!pairs) {
    return fail(pairs.error());
  }
  auto who = rendezvous::join_info_from_env();
  if (!who) {
    return fail(who.error());
  }
  const Millis budget{flags.budget_ms};
  auto client = rendezvous::Client::connect(*who, budget);
  if (!client) {
    return fail(client.error());
  }
  coll::PreflightLinks links;
  links.rank = who->rank;
  if (auto endpoint = net::parse_endpoint(who->endpoint)) {
    links.rendezvous_host = endpoint->host;
  }
  links.publish = [&client](const std::string& key, const std::string& value) { return client->set(key, value); };
  links.wait_for = [&client](const std::string& key, Millis timeout) { return client->get(key, timeout); };
  auto code = coll::run_preflight_worker({std::move(*pairs), Millis{flags.window_ms}, budget, flags.sequential}, links);
  if (code) {
    client->close();
  }
  return code;
}

} // namespace

void add_worker(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand("worker", "");
  sub->group("");  // hidden: used by ddl itself
  sub->require_subcommand(1);
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* allreduce = sub->add_subcommand("allreduce", "One rank of ddl bench allreduce");
  add_bench_flags(*allreduce, *flags);
  allreduce->add_flag("--progress", flags->progress, "Rank 0 reports each size on stderr");
  allreduce->callback([&selected, flags] {
    selected = [flags] {
      auto code = run_allreduce_worker(*flags);
      return code ? *code : report(code.error());
    };
  });
  auto preflight_flags = std::make_shared<PreflightFlags>();
  CLI::App* preflight = sub->add_subcommand("preflight", "One host of the preflight gate's network check");
  preflight->add_option("--pairs", preflight_flags->pairs, "The pairs of check ranks, in order: 0-1,1-2")->required();
  preflight->add_option("--window-ms", preflight_flags->window_ms, "Each direction's stream");
  preflight->add_option("--budget-ms", preflight_flags->budget_ms, "The whole check");
  preflight->add_flag("--sequential", preflight_flags->sequential, "One pair at a time over all hosts");
  preflight->callback([&selected, preflight_flags] {
    selected = [preflight_flags] {
      auto code = run_preflight_worker(*preflight_flags);
      return code ? *code : report(code.error());
    };
  });
  add_pmix_host_worker(*sub, selected);
  CLI::App* relay = sub->add_subcommand("ssh-relay", "This host's ranks over one ssh channel");
  relay->callback([&selected] { selected = [] { return run_ssh_relay(); }; });
}

} // namespace ddl::cmd
