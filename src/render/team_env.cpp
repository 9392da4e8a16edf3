// SPDX-License-Identifier: MIT
#include "src/render/team_env.hpp"

#include <algorithm>

#include <fnmatch.h>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl {

namespace {

bool glob(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

void set_last(EnvList& env, const std::string& name, const std::string& value) {
  std::erase_if(env, [&](const auto& kv) { return kv.first == name; });
  env.emplace_back(name, value);
}

void set_all(EnvList& env, const EnvList& layer) {
  for (const auto& [name, value] : layer) {
    set_last(env, name, value);
  }
}

} // namespace

bool host_env_matches(std::string_view pattern, const Host& host) {
  const std::size_t equals = pattern.find('=');
  if (equals == std::string_view::npos) {
    return glob(std::string(pattern), host.name);
  }
  auto label = host.labels.find(pattern.substr(0, equals));
  return label != host.labels.end() && glob(std::string(pattern.substr(equals + 1)), label->second);
}

EnvList host_env_for(const JobSpec& job, const Host& host) {
  EnvList env;
  for (const HostEnv& table : job.host_env) {
    if (host_env_matches(table.pattern, host)) {
      set_all(env, table.env);
    }
  }
  return env;
}

void add_team_env(EnvList& env, const JobSpec& job, const Host& host) {
  set_all(env, job.env_file_vars);
  set_all(env, host_env_for(job, host));
  set_all(env, job.env_cli);
}

std::string shown_env_value(const JobSpec& job, const std::string& name, const std::string& value) {
  const bool from_file = std::ranges::any_of(job.env_file_vars, [&](const auto& kv) {
    return kv.first == name && kv.second == value;
  });
  return from_file ? fmt::format("<from {}>", job.env_file) : value;
}

std::string host_env_text(const JobSpec& job, const Plan& plan) {
  if (job.host_env.empty()) {
    return {};
  }
  std::string out = "\nper-host env ([host_env], after [job] env and env_file):\n";
  for (const Host& host : plan.hosts) {
    std::string tables;
    for (const HostEnv& table : job.host_env) {
      if (host_env_matches(table.pattern, host)) {
        tables += (tables.empty() ? "" : ", ") + fmt::format("\"{}\"", escape_control(table.pattern));
      }
    }
    out += fmt::format("  {}: {}\n", host.name, tables.empty() ? "no table matches" : tables);
    for (const auto& [name, value] : host_env_for(job, host)) {
      out += fmt::format("    {}={}\n", name, shell_word(value));
    }
  }
  return out;
}

} // namespace ddl
