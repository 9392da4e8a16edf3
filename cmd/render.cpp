// SPDX-License-Identifier: MIT
// `ddl render`: the plan and every framework's bootstrap, printed, never run.
#include <fmt/core.h>
#include <memory>

#include "cmd/command.hpp"
#include "src/session/mpi_mode.hpp"
#include "src/render/frameworks/tensorflow.hpp"
#include "src/render/render_env.hpp"
#include "src/render/render_files.hpp"
#include "src/render/render_plan.hpp"
#include "src/util/text.hpp"
#include "src/util/net_resolve.hpp"

namespace ddl::cmd {

namespace {

struct RenderOptions {
  CommonOptions common;
  std::string format;
  std::optional<int> rank;
};

const std::vector<std::string> k_formats = {
    "plan", "env", "tf-config", "hostfile", "mpich-hostfile", "deepspeed-hostfile", "json"};

Result<int> checked_rank(const RenderOptions& opts, const Plan& plan) {
  if (!opts.rank) {
    return fail(ExitCode::usage, fmt::format("--format {} needs --rank R (0 to {})", opts.format,
                                             plan.world_size - 1));
  }
  if (*opts.rank < 0 || *opts.rank >= plan.world_size) {
    return fail(ExitCode::usage,
                fmt::format("--rank {} is out of range: the plan has {} rank{} (0 to {})",
                            *opts.rank, plan.world_size, plan.world_size == 1 ? "" : "s",
                            plan.world_size - 1));
  }
  return *opts.rank;
}

Result<std::string> render_one(const RenderOptions& opts, const JobSpec& job, const session::PlannedJob& planned) {
  const Plan& plan = planned.plan;
  const LaunchContext ctx = session::preview_context(job, planned);  // nothing is launched
  const std::string& format = opts.format;
  if (format == "json") {
    return plan_json(job, plan, ctx);
  }
  if (format == "hostfile") {
    return openmpi_hostfile(plan);
  }
  if (format == "mpich-hostfile") {
    return mpich_hostfile(plan);
  }
  if (format == "deepspeed-hostfile") {
    return deepspeed_hostfile(plan);
  }
  auto rank = checked_rank(opts, plan);
  if (!rank) {
    return fail(rank.error());
  }
  if (format == "env") {
    // One NAME=VALUE line each, the value quoted for a shell: eval or `.`
    // gives it back byte for byte, newlines included.
    std::string out;
    for (const auto& [name, value] : rank_env(job, plan, *rank, ctx)) {
      out += name + "=" + shell_word(name == "DDL_TOKEN" ? std::string(k_redacted) : value) + "\n";
    }
    return out;
  }
  if (plan.ranks[static_cast<std::size_t>(*rank)].tf_role.empty()) {
    return fail(ExitCode::usage, "the [tensorflow] role counts do not fit this plan");
  }
  return tf_config(job, plan, *rank) + "\n";
}

int run_render(RenderOptions opts) {
  if (opts.format.empty()) {
    if (!opts.common.json) {
      return report(Error{ExitCode::usage,
                          "--format is required: plan, env, tf-config, hostfile, mpich-hostfile, "
                          "deepspeed-hostfile or json"});
    }
    opts.format = "json";
  } else if (opts.common.json && opts.format == "plan") {
    opts.format = "json";
  }
  auto job = load_job_for(opts.common);
  if (!job) {
    return report(job.error());
  }
  net::set_name_lookup(net::NameLookup::no_dns);  // rendering never needs DNS
  JobSpec resolved;  // the job with its MPI mode resolved, as ddl run plans it
  auto planned = session::plan_mpi_job(*job, resolved);
  if (!planned) {
    return report(planned.error());
  }
  if (opts.format == "plan") {
    write_plan_table(resolved, planned->plan, session::preview_context(resolved, *planned), write_stdout);
    return 0;
  }
  auto text = render_one(opts, resolved, *planned);
  if (!text) {
    return report(text.error());
  }
  fmt::print("{}", *text);
  return 0;
}

} // namespace

void add_render(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<RenderOptions>();
  CLI::App* sub = app.add_subcommand(
      "render", "Print the plan, one rank's env or TF_CONFIG, or a hostfile; starts nothing");
  add_common_options(*sub, opts->common);
  sub->add_option("--format", opts->format,
                  "plan, env, tf-config, hostfile, mpich-hostfile, deepspeed-hostfile or json")
      ->check(CLI::IsMember(k_formats));
  sub->add_option("--rank", opts->rank, "The rank for --format env and tf-config");
  sub->footer("Examples:\n  ddl render job.toml --format env --rank 1\n  ddl render -H a:2,b:2 --format hostfile");
  sub->callback([&selected, opts] { selected = [opts] { return run_render(*opts); }; });
}

} // namespace ddl::cmd
