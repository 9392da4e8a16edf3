// SPDX-License-Identifier: MIT
// `ddl bench allreduce` below its command line: one `ddl worker allreduce`
// per rank through the same plan, backend and supervisor as `ddl run`; rank 0
// leaves the nccl-tests table and the JSON in the rendezvous.
#pragma once

#include <optional>
#include <string>

#include "src/collectives/bench_worker.hpp"
#include "src/job/job.hpp"
#include "src/util/error.hpp"

namespace ddl::session {

// The gang's exit code, and rank 0's results (both, or neither when rank 0
// did not get that far).
struct BenchResults {
  int code = 0;
  std::optional<std::string> table;
  std::optional<std::string> json;
};

// Ranks that all exit 0 without rank 0's results are ExitCode::launch: not a
// passed check.
Result<BenchResults> run_allreduce_bench(const JobSpec& job, const coll::WorkerOptions& options);

// --output_file: the results' JSON written to `path` (ExitCode::usage when it
// cannot be).
Result<void> write_bench_json(const std::string& path, const std::string& json);

} // namespace ddl::session
