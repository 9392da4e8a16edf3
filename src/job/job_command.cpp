// SPDX-License-Identifier: MIT
// Reads [job]: the command, what runs it and its environment.
#include <algorithm>
#include <climits>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/text.hpp"

namespace ddl::job_detail {

namespace {

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> names = {"torch", "tensorflow", "horovod", "jax", "mpi"};
  return names;
}

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

void read_command(const Section& job_section, JobSpec& job) {
  const toml::node* value = job_section.node("command");
  if (value == nullptr) {
    return;
  }
  Diagnostics& diag = job_section.diag();
  if (const auto* line = value->as_string()) {
    if (line->get().empty()) {
      diag.at(*value, "job.command: must not be empty");
    } else if (has_nul(line->get())) {
      diag.at(*value, "job.command: contains a NUL byte");
    } else {
      job.command = {line->get()};
      job.command_is_shell = true;
    }
    return;
  }
  const auto* words = value->as_array();
  if (words == nullptr) {
    job_section.wrong_type("command", *value, "an array of strings or a string");
    return;
  }
  if (words->empty()) {
    diag.at(*value, "job.command: must not be empty");
    return;
  }
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < words->size(); ++i) {
    const toml::node& word = *words->get(i);
    if (!word.is_string()) {
      diag.at(word, fmt::format("job.command[{}]: expected a string, got {}", i,
                                type_phrase(word.type())));
    } else if (has_nul(*word.value<std::string>())) {
      diag.at(word, fmt::format("job.command[{}]: contains a NUL byte", i));
    } else {
      argv.push_back(*word.value<std::string>());
    }
  }
  if (argv.size() == words->size()) {
    job.command = std::move(argv);
    job.command_is_shell = false;
  }
}

// Env values may be strings, integers or booleans (written as TOML spells them).
std::optional<std::string> env_value(const toml::node& value) {
  if (const auto* text = value.as_string()) return text->get();
  if (const auto* number = value.as_integer()) return std::to_string(number->get());
  if (const auto* flag = value.as_boolean()) return flag->get() ? "true" : "false";
  return std::nullopt;
}

void read_env(const Section& job_section, JobSpec& job) {
  const toml::node* value = job_section.node("env");
  if (value == nullptr) {
    return;
  }
  if (const auto* table = value->as_table()) {
    job.env = read_env_table(*table, "job.env", job_section.diag());
  } else {
    job_section.wrong_type("env", *value, "a table of NAME = \"value\"");
  }
}

// A variable name, or a name prefix and '*': "NCCL_*".
bool is_env_pattern(std::string_view pattern) {
  if (pattern.ends_with('*')) {
    pattern.remove_suffix(1);
  }
  return is_env_name(pattern);
}

} // namespace

void read_job(const SectionInput& in) {
  const Section s = in.keys();
  JobSpec& job = in.job;
  if (s.read_string("name", job.name) && job.name.empty()) {
    s.diag().at(*s.node("name"), "job.name: must not be empty");
    job.name = "ddl";
  }
  read_command(s, job);
  s.read_string("workdir", job.workdir);
  if (s.read_string("python", job.python) && job.python.empty()) {
    s.diag().at(*s.node("python"), "job.python: must not be empty");
    job.python = "python3";
  }
  read_env(s, job);
  read_string_array(s, "env_pass", [&](const toml::node& item, const std::string& pattern) {
    if (is_env_pattern(pattern)) {
      job.env_pass.push_back(pattern);
    } else {
      s.diag().at(item, fmt::format("job.env_pass: {} is not a variable name or a NAME_* "
                                    "pattern", quote_input(pattern)));
    }
  });
  if (s.node("frameworks") != nullptr) {
    job.frameworks.clear();
  }
  read_string_array(s, "frameworks", [&](const toml::node& item, const std::string& name) {
    auto found = std::find(framework_names().begin(), framework_names().end(), name);
    if (found == framework_names().end()) {
      s.diag().at(item, "job.frameworks: " + choice_problem(name, framework_names()));
      return;
    }
    auto framework = static_cast<Framework>(found - framework_names().begin());
    if (std::find(job.frameworks.begin(), job.frameworks.end(), framework) ==
        job.frameworks.end()) {
      job.frameworks.push_back(framework);
    }
  });
  Millis timeout{0};
  if (s.read_duration("timeout", timeout, false)) {
    job.timeout = timeout;
  }
  s.read_int("max_restarts", job.max_restarts, 0, INT_MAX);
  s.read_duration("grace", job.grace, true);
  s.read_string("log_dir", job.log_dir);
  s.read_bool("strict_logs", job.strict_logs);
  read_output_keys(s, job, in.places);
  read_stop(s, job.stop);
  read_team_keys(s, in.origin, job, in.places);
}

EnvList read_env_table(const toml::table& table, std::string_view label, Diagnostics& diag) {
  EnvList env;
  // toml++ keeps keys sorted; keep the file's order instead.
  std::vector<std::pair<Position, std::pair<std::string, std::string>>> entries;
  for (auto&& [key, item] : table) {
    std::string name(key.str());
    Position where = position_of(key.source());
    if (!is_env_name(name)) {
      diag.at(where, fmt::format("{}: {} is not a valid variable name "
                                 "([A-Za-z_][A-Za-z0-9_]*)", label, quote_input(name)));
      continue;
    }
    std::optional<std::string> text = env_value(item);
    if (!text) {
      diag.at(item, fmt::format("{}.{}: expected a string, got {}", label, name,
                                type_phrase(item.type())));
    } else if (has_nul(*text)) {
      diag.at(item, fmt::format("{}.{}: value contains a NUL byte", label, name));
    } else {
      entries.push_back({where, {name, *text}});
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  for (auto& entry : entries) {
    env.push_back(std::move(entry.second));
  }
  return env;
}

} // namespace ddl::job_detail
