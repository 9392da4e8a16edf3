// SPDX-License-Identifier: MIT
// `ddl bench allreduce`: starts one `ddl worker allreduce` per rank through
// the same plan, backend and supervisor as `ddl run`; rank 0 leaves the
// nccl-tests table and the JSON in the rendezvous, and this prints them.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/core.h>
#include <unistd.h>

#include "cmd/bench_options.hpp"
#include "cmd/command.hpp"
#include "src/session/job_run.hpp"
#include "src/collectives/bench_worker.hpp"
#include "src/util/file.hpp"
#include "src/util/own_path.hpp"

namespace ddl::cmd {

namespace {

struct BenchCommand {
  CommonOptions common;
  BenchFlags flags;
  std::string output_file;
};

Result<void> write_json_file(const std::string& path, const std::string& json) {
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

Result<int> run_bench(const BenchCommand& cmd) {
  BenchFlags flags = cmd.flags;
  flags.progress = ::isatty(STDERR_FILENO) != 0 && !cmd.common.quiet;
  auto options = worker_options(flags);
  if (!options) {
    return fail(options.error());
  }
  auto job = load_job_for(cmd.common, JobClock::starts);
  if (!job) {
    return fail(job.error());
  }
  // Every rank runs `ddl worker allreduce` where the backend has ddl; rank 0
  // leaves its results in the rendezvous (stdout is for them alone).
  std::optional<std::string> table;
  std::optional<std::string> json;
  session::RunAsk ask;
  ask.worker = [&options](const Backend& backend) {
    std::vector<std::string> command{backend.ddl_path(), "worker", "allreduce"};
    for (auto& arg : worker_args(*options)) {
      command.push_back(std::move(arg));
    }
    return command;
  };
  ask.after_ranks = [&](rendezvous::Server& server) {
    table = server.value(coll::k_bench_table_key);
    json = server.value(coll::k_bench_json_key);
  };
  auto code = session::JobRun(*job, std::move(ask)).run();
  if (!code) {
    return fail(code.error());
  }
  // Ranks that all exit 0 without rank 0's results are not a passed check.
  if (*code == 0 && !(table && json)) {
    return fail(ExitCode::launch,
                "every rank exited 0 but rank 0's results never reached the launcher's rendezvous");
  }
  if (table && json) {
    std::fputs(cmd.common.json ? json->c_str() : table->c_str(), stdout);
    std::fflush(stdout);
    if (!cmd.output_file.empty()) {
      if (auto ok = write_json_file(cmd.output_file, *json); !ok) {
        return fail(ok.error());
      }
    }
  }
  return *code;
}

} // namespace

void add_bench(CLI::App& app, Command& selected) {
  CLI::App* bench = app.add_subcommand("bench", "Run ddl's built-in benchmarks through a real launch");
  bench->require_subcommand(1);
  bench->footer("Example:\n  ddl bench allreduce -H node1:8,node2:8 -b 8 -e 128M -f 2");
  auto cmd = std::make_shared<BenchCommand>();
  CLI::App* sub = bench->add_subcommand(
      "allreduce", "Allreduce sweep with nccl-tests' all_reduce_perf flags and table");
  add_common_options(*sub, cmd->common);
  add_bench_flags(*sub, cmd->flags);
  sub->add_option("-J,--output_file", cmd->output_file, "Also write the results as JSON to FILE");
  sub->footer("Exit status: 0, 1 when any element was wrong, else as ddl run (2 usage, 3 launch, ...).\n\n"
              "Examples:\n  ddl bench allreduce --np 4 -b 8 -e 64M\n  ddl bench allreduce job.toml --transport nccl -J out.json");
  sub->callback([&selected, cmd] {
    selected = [cmd] {
      auto code = run_bench(*cmd);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
