// SPDX-License-Identifier: MIT
// all_reduce_perf's flags as typed, read into the bench worker's options
// (ExitCode::usage naming each flag that is wrong), and written back for
// the workers' command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/collectives/bench_worker.hpp"
#include "src/util/error.hpp"

namespace ddl::coll {

// all_reduce_perf's flags as typed, shared by `ddl bench allreduce` and the
// hidden `ddl worker allreduce` it starts on every rank.
struct BenchFlags {
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  std::size_t step_factor = 2;
  std::optional<std::string> step_bytes;
  int iters = 20;
  int warmup_iters = 5;
  int check = 1;
  std::string datatype = "float";
  std::string op = "sum";
  std::string transport = "auto";
  int streams = 1;
  bool progress = false;  // worker only: set by the launcher on a terminal
};

// Validates every flag (ExitCode::usage, all problems at once).
Result<WorkerOptions> worker_options(const BenchFlags& flags);
// The flags again, for the worker's argv (sizes in plain bytes).
std::vector<std::string> worker_args(const WorkerOptions& options);

} // namespace ddl::coll
