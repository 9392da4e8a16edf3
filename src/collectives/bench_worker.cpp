// SPDX-License-Identifier: MIT
#include "src/collectives/bench_worker.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/core.h>
#include <unistd.h>

#include "src/collectives/report.hpp"
#include "src/collectives/transports.hpp"
#include "src/util/net.hpp"

namespace ddl::coll {

namespace {

Result<std::string> choose_transport(const WorkerOptions& options, const WorkerContext& context) {
  if (options.transport != "auto") {
    return options.transport;
  }
  bool usable = nccl_usable(context.local_rank, nullptr);
  auto votes = context.allgather(usable ? "1" : "0");
  if (!votes) {
    return fail(votes.error());
  }
  for (const auto& vote : *votes) {
    if (vote != "1") {
      return std::string("tcp");
    }
  }
  return std::string("nccl");
}

Result<std::unique_ptr<Collective>> join_transport(const std::string& transport,
                                                   const WorkerOptions& options,
                                                   const WorkerContext& context) {
  if (transport == "nccl") {
    return connect_nccl(context.rank, context.world, context.local_rank, context.allgather);
  }
  if (transport == "mpi") {
    return connect_mpi();
  }
  if (transport != "tcp") {
    return fail(ExitCode::usage, "unknown transport '" + transport + "'; use tcp, nccl or mpi");
  }
  TcpOptions tcp = options.tcp;
  auto address = local_address_towards(context.rendezvous_host);
  if (!address) {
    return fail(address.error());
  }
  tcp.listen_address = *address;
  return connect_tcp_ring(context.rank, context.world, context.allgather, tcp);
}

std::vector<std::string> distinct_hosts(const std::vector<std::string>& lines_hosts) {
  std::vector<std::string> hosts;
  for (const auto& host : lines_hosts) {
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) {
      hosts.push_back(host);
    }
  }
  return hosts;
}

} // namespace

Result<std::string> local_address_towards(const std::string& host) {
  if (host.empty() || host == "localhost" || host.starts_with("127.")) {
    return std::string("127.0.0.1");
  }
  net::Route route = net::route_to(host);
  if (route.end == net::RouteEnd::unresolved) {
    return fail(ExitCode::launch, "cannot resolve '" + host + "': " + route.why);
  }
  if (route.end == net::RouteEnd::unroutable) {
    return fail(ExitCode::launch, "no route to '" + host + "': " + route.why);
  }
  return route.address;
}

Result<int> run_bench_worker(const WorkerOptions& options, const WorkerContext& context) {
  auto transport = choose_transport(options, context);
  if (!transport) {
    return fail(transport.error());
  }
  auto collective = join_transport(*transport, options, context);
  if (!collective) {
    return fail(collective.error());
  }
  Collective& c = **collective;
  auto hosts = context.allgather(context.host);
  if (!hosts) {
    return fail(hosts.error());
  }
  auto rank_lines = context.allgather(format_rank_line(
      context.rank, static_cast<long>(::getpid()),
      context.hostname.empty() ? context.host : context.hostname, c.device(), c.device_bus(),
      c.name()));
  if (!rank_lines) {
    return fail(rank_lines.error());
  }
  std::size_t sizes = sweep_sizes(options.sweep).size();
  std::size_t done = 0;
  auto on_row = [&](const SizeResult& row) {
    ++done;
    if (options.progress && context.rank == 0) {
      std::fprintf(stderr, "ddl: bench: %zu/%zu sizes, %zu B: busbw %.2f GB/s\n", done, sizes,
                   row.bytes, row.out_of_place.busbw);
      std::fflush(stderr);
    }
  };
  auto report = run_sweep(c, options.sweep, on_row);
  if (!report) {
    return fail(report.error());
  }
  if (context.rank == 0) {
    ReportContext rc{context.version, c.name(), c.world_size(), distinct_hosts(*hosts),
                     c.facts(), *rank_lines};
    if (auto ok = context.publish(k_bench_table_key, format_table(options.sweep, rc, *report));
        !ok) {
      return fail(ok.error());
    }
    if (auto ok = context.publish(k_bench_json_key, format_json(*report)); !ok) {
      return fail(ok.error());
    }
  }
  return report->wrong > 0 ? 1 : 0;
}

} // namespace ddl::coll
