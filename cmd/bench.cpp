// SPDX-License-Identifier: MIT
// `ddl bench allreduce`: starts one `ddl worker allreduce` per rank through
// the same plan, backend and supervisor as `ddl run`; rank 0 leaves the
// nccl-tests table and the JSON in the rendezvous, and this prints them.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <unistd.h>

#include "backends/registry.hpp"
#include "cmd/bench_options.hpp"
#include "cmd/command.hpp"
#include "rendezvous/address.hpp"
#include "rendezvous/protocol.hpp"
#include "rendezvous/server.hpp"
#include "src/collectives/bench_worker.hpp"
#include "src/inventory/inventory.hpp"
#include "src/render/launches.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render.hpp"
#include "src/launch/supervisor.hpp"
#include "src/util/process.hpp"

extern char** environ;

namespace ddl::cmd {

namespace {

struct BenchCommand {
  CommonOptions common;
  BenchFlags flags;
  std::string output_file;
};

Result<void> write_json_file(const std::string& path, const std::string& json) {
  std::ofstream out(path, std::ios::trunc);
  out << json;
  out.close();
  if (!out) {
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
  auto job = load_job_for(cmd.common);
  if (!job) {
    return fail(job.error());
  }
  std::string ddl_path = !job->ssh.remote_ddl.empty() && job->launch.backend == BackendKind::ssh
                             ? job->ssh.remote_ddl
                             : own_executable_path();
  job->command = {ddl_path, "worker", "allreduce"};
  for (auto& arg : worker_args(*options)) {
    job->command.push_back(std::move(arg));
  }
  job->command_is_shell = false;
  auto plan = plan_for(*job);
  if (!plan) {
    return fail(plan.error());
  }
  auto address = rendezvous::bind_address(*job, *plan);
  if (!address) {
    return fail(address.error());
  }
  auto token = rendezvous::generate_token();
  if (!token) {
    return fail(token.error());
  }
  rendezvous::Server server;
  rendezvous::ServerOptions server_options;
  server_options.bind_address = *address;
  server_options.port = job->rendezvous.port;
  server_options.token = *token;
  server_options.world_size = plan->world_size;
  server_options.job = job->name;
  auto endpoint = server.start(server_options);
  if (!endpoint) {
    return fail(endpoint.error());
  }
  LaunchContext ctx;
  ctx.rendezvous = *endpoint;
  ctx.token = *token;
  auto master_port = launch_master_port(*job);
  if (!master_port) {
    return fail(master_port.error());
  }
  ctx.master_port = *master_port;
  std::unique_ptr<Backend> backend = make_backend(*job);
  EnvList base = job->launch.backend == BackendKind::local ? local_login_env(environ) : EnvList{};
  SupervisorOptions supervisor;
  supervisor.timeout = job->timeout;
  supervisor.grace = job->grace;
  auto build = [&](int attempt) -> Result<std::vector<RankLaunch>> {
    LaunchContext attempt_ctx = ctx;
    attempt_ctx.attempt = attempt;
    return build_launches(*job, *plan, attempt_ctx, base, environ);
  };
  auto code = supervise(*backend, *plan, build, supervisor);
  backend->shutdown();
  auto table = server.value(coll::k_bench_table_key);
  auto json = server.value(coll::k_bench_json_key);
  server.stop();
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
  auto cmd = std::make_shared<BenchCommand>();
  CLI::App* sub = bench->add_subcommand(
      "allreduce", "Allreduce sweep with nccl-tests' all_reduce_perf flags and table");
  add_common_options(*sub, cmd->common);
  add_bench_flags(*sub, cmd->flags);
  sub->add_option("-J,--output_file", cmd->output_file, "Also write the results as JSON to FILE");
  sub->footer("Exit status: 0, 1 when any element was wrong, else as ddl run (2 usage, 3 launch, ...).");
  sub->callback([&selected, cmd] {
    selected = [cmd] {
      auto code = run_bench(*cmd);
      return code ? *code : report(code.error());
    };
  });
}

} // namespace ddl::cmd
