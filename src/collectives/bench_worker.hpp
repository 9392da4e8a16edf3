// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>

#include "src/collectives/collective.hpp"
#include "src/collectives/sweep.hpp"
#include "src/collectives/tcp_ring.hpp"

namespace ddl::coll {

// Keys rank 0 stores in the rendezvous for the launcher to print.
inline constexpr const char* k_bench_table_key = "ddl/bench/allreduce/table";
inline constexpr const char* k_bench_json_key = "ddl/bench/allreduce/json";

// What `ddl worker allreduce` was asked to do.
struct WorkerOptions {
  SweepOptions sweep;
  std::string transport = "auto";  // auto | tcp | nccl | mpi
  TcpOptions tcp;
  bool progress = false;           // rank 0 prints a line per size on stderr
};

// Where the worker runs, and its links to the others (the rendezvous).
struct WorkerContext {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  std::string host;                // this rank's host name in the plan (DDL_HOST)
  std::string hostname;            // the machine's own name, for the rank lines
  std::string rendezvous_host;     // our ring address is the one routing there
  std::string version;             // ddl's, for the preamble
  Allgather allgather;
  std::function<Result<void>(const std::string& key, const std::string& value)> publish;
};

// The address a rank listens on: the one that reaches the rendezvous host
// `host`, 127.0.0.1 for loopback names.
Result<std::string> local_address_towards(const std::string& host);

// Picks and joins the transport ("auto": nccl when every rank has a usable
// GPU, else tcp), runs the sweep, and has rank 0 publish the table and the
// JSON. Returns 0, or 1 when any element was wrong (on every rank).
Result<int> run_bench_worker(const WorkerOptions& options, const WorkerContext& context);

} // namespace ddl::coll
