// SPDX-License-Identifier: MIT
// The whole plan, as the table of --dry-run / `render --format plan` and as JSON.
#include <algorithm>
#include <fmt/core.h>

#include "src/render/render_plan.hpp"
#include "src/render/binding.hpp"
#include "src/render/team_env.hpp"
#include "src/util/json.hpp"
#include "src/util/table.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

// The argv ddl executes: a string command goes through /bin/sh -c.
std::vector<std::string> command_argv(const JobSpec& job) {
  if (job.command_is_shell && !job.command.empty()) {
    return {"/bin/sh", "-c", job.command.front()};
  }
  return job.command;
}

std::string shown_command(const JobSpec& job) {
  const auto argv = command_argv(job);
  if (argv.empty()) {
    return "(none: give one after -- or in job.command)";
  }
  std::string out;
  for (const auto& word : argv) {
    out += (out.empty() ? "" : " ") + shell_word(word);
  }
  return out;
}

// The secret never leaves ddl in any printed form, nor what the env file holds.
EnvList redacted_env(const JobSpec& job, const Plan& plan, int rank, const LaunchContext& ctx) {
  EnvList env = rank_env(job, plan, rank, ctx);
  for (auto& [name, value] : env) {
    value = name == "DDL_TOKEN" ? std::string(k_redacted) : shown_env_value(job, name, value);
  }
  return env;
}

std::string ints_or(const std::vector<int>& values, std::string_view empty) {
  return values.empty() ? std::string(empty) : join_ints(values);
}

std::string frameworks_text(const JobSpec& job) {
  std::string out;
  for (Framework framework : job.frameworks) {
    out += (out.empty() ? "" : ",") + std::string(to_string(framework));
  }
  return out.empty() ? "none" : out;
}

std::string rank_table(const JobSpec& job, const Plan& plan) {
  const bool tf = uses_framework(job, Framework::tensorflow);
  std::vector<TableRow> rows;
  rows.push_back({"RANK", "HOST", "ADDRESS", "LOCAL", "NODE", "GPUS"});
  if (tf) {
    rows.back().emplace_back("TF_TASK");
  }
  for (const auto& slot : plan.ranks) {
    const Host& host = plan.hosts[slot.host_index];
    rows.push_back({std::to_string(slot.rank), host.name, host.address,
                    fmt::format("{}/{}", slot.local_rank, slot.local_size),
                    std::to_string(slot.node_rank), ints_or(slot.gpus, "-")});
    if (tf) {
      rows.back().push_back(fmt::format("{}:{} port {}", slot.tf_role, slot.tf_index, slot.tf_port));
    }
  }
  return align_columns(rows);
}

void append_env_block(std::string& out, int rank, std::string_view host, const EnvList& env) {
  out += "\nrank ";
  out += std::to_string(rank);
  out += " env (";
  out += host;
  out += "):\n";
  for (const auto& [name, value] : env) {
    out += "  ";
    out += name;
    out += '=';
    out += shell_word(value);
    out += '\n';
  }
}

// Whether the job asks for placement: then the plan says how and why.
bool shows_placement(const JobSpec& job) {
  const PlacementSection& placement = job.placement;
  return placement.strategy != PlacementStrategy::in_order || !placement.constraints.empty() ||
         !placement.order.empty() || job.launch.np.min.has_value();
}

std::string placement_text(const JobSpec& job, const Plan& plan) {
  if (!shows_placement(job)) {
    return {};
  }
  std::vector<int> ranks(plan.hosts.size(), 0);
  for (const auto& slot : plan.ranks) {
    ++ranks[slot.host_index];
  }
  std::string out = "placement: " + plan.placement + "\n";
  for (std::size_t h = 0; h < plan.hosts.size(); ++h) {
    const Host& host = plan.hosts[h];
    const std::string labels = format_labels(host.labels);
    out += fmt::format("  {}: {} of {} slot{}{}\n", host.name, ranks[h], host.slots, host.slots == 1 ? "" : "s",
                       labels.empty() ? "" : " (" + labels + ")");
  }
  for (const auto& host : plan.left_out) {
    out += fmt::format("  {}: left out: {}\n", host.name, host.why);
  }
  return out;
}

} // namespace

void write_plan_table(const JobSpec& job, const Plan& plan, const LaunchContext& ctx,
                      const std::function<void(std::string_view)>& write) {
  std::string out = fmt::format(
      "job {}: {} rank{} on {} host{}, backend {}, frameworks {}\n", escape_control(job.name), plan.world_size,
      plan.world_size == 1 ? "" : "s", plan.hosts.size(), plan.hosts.size() == 1 ? "" : "s",
      ctx.backend.empty() ? std::string(to_string(job.launch.backend)) : ctx.backend,
      frameworks_text(job));
  out += "command: " + shown_command(job) + "\n";
  if (!job.workdir.empty()) {
    out += "workdir: " + escape_control(job.workdir) + "\n";
  }
  if (!job.env_pass.empty()) {
    std::string names;
    for (const auto& name : job.env_pass) {
      names += (names.empty() ? "" : " ") + name;
    }
    out += "passed from the launcher's environment: " + names + "\n";
  }
  out += placement_text(job, plan);
  out += "\n";
  write(out);
  write(rank_table(job, plan));
  constexpr std::size_t k_piece = 1 << 20;
  out.clear();
  for (const auto& slot : plan.ranks) {
    append_env_block(out, slot.rank, plan.hosts[slot.host_index].name, redacted_env(job, plan, slot.rank, ctx));
    if (out.size() >= k_piece) {
      write(out);
      out.clear();
    }
  }
  write(out);
}

std::string plan_table(const JobSpec& job, const Plan& plan, const LaunchContext& ctx) {
  std::string out;
  write_plan_table(job, plan, ctx, [&out](std::string_view piece) { out += piece; });
  return out;
}

std::string plan_json(const JobSpec& job, const Plan& plan, const LaunchContext& ctx) {
  Json ranks = Json::array();
  for (const auto& slot : plan.ranks) {
    const Host& host = plan.hosts[slot.host_index];
    Json env = Json::object();
    for (const auto& [name, value] : redacted_env(job, plan, slot.rank, ctx)) {
      env[name] = value;
    }
    ranks.push_back({{"rank", slot.rank}, {"host", host.name}, {"address", host.address},
                     {"local_rank", slot.local_rank}, {"local_size", slot.local_size},
                     {"node_rank", slot.node_rank}, {"gpus", slot.gpus}, {"env", std::move(env)},
                     {"command", command_argv(job)}});
    if (job.launch.bind != CpuBind::none) {
      ranks.back()["cpus"] = rank_binding(job, plan, slot.rank, ctx).cpus;
    }
  }
  Json doc = {{"job", job.name}, {"world_size", plan.world_size}, {"ranks", std::move(ranks)}};
  if (shows_placement(job)) {
    Json left_out = Json::array();
    for (const auto& host : plan.left_out) {
      left_out.push_back({{"host", host.name}, {"why", host.why}});
    }
    doc["placement"] = {{"how", plan.placement}, {"left_out", std::move(left_out)}};
  }
  return to_json_text(doc) + "\n";
}

} // namespace ddl
