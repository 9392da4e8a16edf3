// SPDX-License-Identifier: MIT
#include "src/render/launches.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>
#include <unordered_map>

#include "src/render/binding.hpp"
#include "src/render/container.hpp"

namespace ddl {

EnvList local_login_env(char** environ_ptr) {
  constexpr std::array<std::string_view, 9> names = {"PATH", "HOME",  "USER", "LOGNAME", "SHELL",
                                                     "LANG", "TZ", "TERM", "TMPDIR"};
  EnvList env;
  if (environ_ptr == nullptr) {
    return env;
  }
  for (char** entry = environ_ptr; *entry != nullptr; ++entry) {
    std::string_view item(*entry);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    std::string_view name = item.substr(0, eq);
    if (std::ranges::find(names, name) != names.end() || name.starts_with("LC_")) {
      env.emplace_back(std::string(name), std::string(item.substr(eq + 1)));
    }
  }
  return env;
}

EnvList merge_env(const std::vector<const EnvList*>& layers) {
  EnvList merged;
  std::unordered_map<std::string, std::size_t> index;
  for (const EnvList* layer : layers) {
    for (const auto& [name, value] : *layer) {
      if (auto found = index.find(name); found != index.end()) {
        merged[found->second].second = value;
      } else {
        index.emplace(name, merged.size());
        merged.emplace_back(name, value);
      }
    }
  }
  return merged;
}

bool is_launcher_only(std::string_view name) {
  constexpr std::array<std::string_view, 11> names = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR",
                                                      "TERM", "PWD",  "OLDPWD", "SHLVL", "_"};
  return std::ranges::find(names, name) != names.end();
}

namespace {

bool named_by_job(const JobSpec& job, std::string_view name) {
  return std::ranges::any_of(job.env, [&](const auto& kv) { return kv.first == name; }) ||
         std::ranges::find(job.env_pass, name) != job.env_pass.end();
}

bool has_name(const EnvList& env, std::string_view name) {
  return std::ranges::any_of(env, [&](const auto& kv) { return kv.first == name; });
}

} // namespace

EnvList launcher_env(const JobSpec& job, RankPlace place, char** environ_ptr) {
  EnvList passed = passed_env(job, environ_ptr);
  if (place == RankPlace::this_machine) {
    EnvList login = local_login_env(environ_ptr);
    return merge_env({&login, &passed});
  }
  std::erase_if(passed, [&](const auto& kv) { return is_launcher_only(kv.first) && !named_by_job(job, kv.first); });
  return passed;
}

namespace {

// What a container gets by --env: everything the rank gets but the
// launcher's login (PATH, HOME, ... of this machine, which would break the
// image's) and the runtime client's own settings, unless the job names them.
std::vector<std::string> container_env_names(const JobSpec& job, const EnvList& env, const EnvList& own) {
  std::vector<std::string> names;
  for (const auto& [name, value] : env) {
    const bool from_login = is_launcher_only(name) || name == "LANG" || name == "TZ" || name.starts_with("LC_") ||
                            is_runtime_client_variable(name);
    if (!from_login || has_name(own, name) || named_by_job(job, name)) {
      names.push_back(name);
    }
  }
  return names;
}

// The rank's program wrapped in its container; `launch.env` then holds what
// the runtime client needs.
void contain(RankLaunch& launch, const JobSpec& job, const LaunchContext& ctx, const EnvList& own,
             const EnvList& client) {
  ContainerRank who{job.name, launch.rank, ctx.attempt, ctx.container_tag, launch.cpus};
  const std::vector<std::string> names = container_env_names(job, launch.env, own);
  launch.argv = container_argv(job, who, launch.argv, launch.env, names);
  launch.env = merge_env({&launch.env, &client});
}

} // namespace

std::vector<RankLaunch> build_launches(const JobSpec& job, const Plan& plan, const LaunchContext& ctx,
                                       RankPlace place, char** environ_ptr) {
  std::vector<std::string> argv = job.command;
  if (job.command_is_shell && !job.command.empty()) {
    argv = {"/bin/sh", "-c", job.command.front()};
  }
  argv = setup_argv(job.setup, argv);
  const EnvList client = job.container.enabled() && place == RankPlace::this_machine
                             ? runtime_client_env(environ_ptr) : EnvList{};
  std::string workdir = job.workdir;
  const bool workdir_is_default = workdir.empty();
  if (workdir_is_default) {
    std::error_code ec;
    workdir = std::filesystem::current_path(ec).string();
  }
  EnvList base = launcher_env(job, place, environ_ptr);
  std::vector<RankLaunch> launches;
  launches.reserve(plan.ranks.size());
  for (const auto& slot : plan.ranks) {
    RankLaunch launch;
    launch.rank = slot.rank;
    launch.host = plan.hosts.at(slot.host_index);
    launch.argv = argv;
    launch.workdir = workdir;
    launch.workdir_is_default = workdir_is_default;
    launch.grace = job.grace;
    launch.reads_stdin = job.stdin_ranks.reads(slot.rank);
    EnvList own = rank_env(job, plan, slot.rank, ctx);
    std::erase_if(own, [&](const auto& kv) { return is_user_overridable_default(kv.first) && has_name(base, kv.first); });
    launch.env = merge_env({&base, &own});
    launch.cpus = rank_binding(job, plan, slot.rank, ctx).cpus;
    if (job.container.enabled()) {
      contain(launch, job, ctx, own, client);
    }
    launches.push_back(std::move(launch));
  }
  return launches;
}

} // namespace ddl
