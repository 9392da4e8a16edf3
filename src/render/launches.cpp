// SPDX-License-Identifier: MIT
#include "src/render/launches.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>
#include <unordered_map>

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

std::vector<RankLaunch> build_launches(const JobSpec& job, const Plan& plan, const LaunchContext& ctx,
                                       RankPlace place, char** environ_ptr) {
  std::vector<std::string> argv = job.command;
  if (job.command_is_shell && !job.command.empty()) {
    argv = {"/bin/sh", "-c", job.command.front()};
  }
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
    EnvList own = rank_env(job, plan, slot.rank, ctx);
    std::erase_if(own, [&](const auto& kv) { return is_user_overridable_default(kv.first) && has_name(base, kv.first); });
    launch.env = merge_env({&base, &own});
    launches.push_back(std::move(launch));
  }
  return launches;
}

} // namespace ddl
