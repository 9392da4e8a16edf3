// SPDX-License-Identifier: MIT
#include "src/session/allreduce_bench.hpp"

#include <unistd.h>

#include <vector>

#include <fmt/core.h>

#include "src/collectives/bench_flags.hpp"
#include "src/session/job_run.hpp"
#include "src/util/file.hpp"
#include "src/util/own_path.hpp"

namespace ddl::session {

Result<BenchResults> run_allreduce_bench(const JobSpec& job, const coll::WorkerOptions& options) {
  // Every rank runs `ddl worker allreduce` where the backend has ddl; rank 0
  // leaves its results in the rendezvous (stdout is for them alone).
  BenchResults results;
  RunAsk ask;
  ask.worker = [&options](const Backend& backend) {
    std::vector<std::string> command{backend.ddl_path(), "worker", "allreduce"};
    for (auto& arg : coll::worker_args(options)) {
      command.push_back(std::move(arg));
    }
    return command;
  };
  ask.after_ranks = [&results](rendezvous::Server& server) {
    results.table = server.value(coll::k_bench_table_key);
    results.json = server.value(coll::k_bench_json_key);
  };
  auto code = JobRun(job, std::move(ask)).run();
  if (!code) {
    return fail(code.error());
  }
  if (*code == 0 && !(results.table && results.json)) {
    return fail(ExitCode::launch,
                "every rank exited 0 but rank 0's results never reached the launcher's rendezvous");
  }
  results.code = *code;
  return results;
}

Result<void> write_bench_json(const std::string& path, const std::string& json) {
  auto fd = open_named_file(path, false, "--output_file");
  if (!fd) {
    return fail(fd.error());
  }
  const bool written = write_fully(*fd, json);
  ::close(*fd);
  if (!written) {
    return fail(ExitCode::usage, fmt::format("cannot write --output_file '{}'", path));
  }
  return {};
}

} // namespace ddl::session
