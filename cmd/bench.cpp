// SPDX-License-Identifier: MIT
// `ddl bench allreduce`: one `ddl worker allreduce` per rank
// (src/session/allreduce_bench.hpp); this prints rank 0's table or JSON.
#include <cstdio>
#include <memory>
#include <string>

#include <unistd.h>

#include "cmd/bench_options.hpp"
#include "cmd/command.hpp"
#include "src/session/allreduce_bench.hpp"

namespace ddl::cmd {

namespace {

struct BenchCommand {
  CommonOptions common;
  BenchFlags flags;
  std::string output_file;
};

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
  auto results = session::run_allreduce_bench(*job, *options);
  if (!results) {
    return fail(results.error());
  }
  if (results->table && results->json) {
    std::fputs(cmd.common.json ? results->json->c_str() : results->table->c_str(), stdout);
    std::fflush(stdout);
    if (!cmd.output_file.empty()) {
      if (auto ok = session::write_bench_json(cmd.output_file, *results->json); !ok) {
        return fail(ok.error());
      }
    }
  }
  return results->code;
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
