// SPDX-License-Identifier: MIT
// The team's environment (issue 31): [job] setup and env_file, [launch]
// bind, [host_env."PATTERN"] and [container], and --env-file / --bind.
#include <algorithm>
#include <array>
#include <optional>
#include <tuple>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/env_file.hpp"

namespace ddl::job_detail {

namespace {

const std::vector<std::string>& runtime_names() {
  static const std::vector<std::string> names = {"podman", "docker", "apptainer"};
  return names;
}

// The placeholders a runtime template may hold.
constexpr std::array<std::string_view, 5> k_placeholders = {"{image}", "{name}", "{workdir}", "{gpus}", "{command}"};

// The first "{...}" of `word` that is no placeholder, if any.
std::optional<std::string> unknown_placeholder(std::string_view word) {
  for (std::size_t open = word.find('{'); open != std::string_view::npos; open = word.find('{', open + 1)) {
    std::size_t close = word.find('}', open);
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    std::string_view token = word.substr(open, close - open + 1);
    if (std::ranges::find(k_placeholders, token) == k_placeholders.end()) {
      return std::string(token);
    }
  }
  return std::nullopt;
}

// The strings of the array at `key`, each one checked by `problem` ("" when
// fine); nullopt when the key is absent or something was reported.
template <typename Problem>
std::optional<std::vector<std::string>> read_words(const Section& s, std::string_view key, Problem problem) {
  const toml::array* items = s.read_array(key, "an array of strings");
  if (items == nullptr) {
    return std::nullopt;
  }
  std::vector<std::string> words;
  bool fine = true;
  for (std::size_t i = 0; i < items->size(); ++i) {
    const toml::node& item = *items->get(i);
    const auto* word = item.as_string();
    std::string why = word == nullptr ? fmt::format("expected a string, got {}", type_phrase(item.type()))
                      : word->get().find('\0') != std::string::npos ? "contains a NUL byte"
                                                                      : problem(word->get());
    if (!why.empty()) {
      s.diag().at(item, fmt::format("{}[{}]: {}", s.label(key), i, why));
      fine = false;
    } else {
      words.push_back(word->get());
    }
  }
  return fine ? std::optional(std::move(words)) : std::nullopt;
}

std::string no_problem(const std::string&) { return {}; }

std::string mount_problem(const std::string& mount) {
  const std::size_t colon = mount.find(':');
  if (colon == std::string::npos || colon == 0) {
    return fmt::format("{} is not SOURCE:TARGET[:OPTIONS]", quote_input(mount));
  }
  if (mount.compare(colon + 1, 1, "/") != 0) {
    return fmt::format("{}: the target must be an absolute path in the container", quote_input(mount));
  }
  return {};
}

// {command} stands for the program's words, one word each: inside a word
// ("echo wrapped: {command}") it would be left as text and the program
// never run, so it is refused.
std::string template_word_problem(const std::string& word) {
  if (auto unknown = unknown_placeholder(word)) {
    return fmt::format("{} is not one of {{image}}, {{name}}, {{workdir}}, {{gpus}}, {{command}}",
                       quote_input(*unknown));
  }
  if (word != "{command}" && word.find("{command}") != std::string::npos) {
    return fmt::format("{}: {{command}} must be a word of its own (the program's words go there, one for one); "
                       "to run them from a shell, write \"sh\", \"-c\", \"...; exec \\\"$@\\\"\", \"sh\", "
                       "\"{{command}}\"",
                       quote_input(word));
  }
  return {};
}

void read_runtime(const Section& s, ContainerSection& container) {
  const toml::node* value = s.node("runtime");
  if (value == nullptr) {
    return;
  }
  if (value->is_string()) {
    std::string name;
    s.read_string("runtime", name);
    auto found = std::ranges::find(runtime_names(), name);
    if (found == runtime_names().end()) {
      s.diag().at(*value, "container.runtime: " + choice_problem(name, runtime_names()) +
                              " (or an array: the command, with {image})");
      return;
    }
    container.runtime = static_cast<ContainerRuntime>(found - runtime_names().begin());
    return;
  }
  if (!value->is_array()) {
    s.wrong_type("runtime", *value, "podman, docker, apptainer or an array of strings");
    return;
  }
  container.runtime = ContainerRuntime::custom;  // even when its words are wrong: mounts and options are refused
  auto words = read_words(s, "runtime", template_word_problem);
  if (!words) {
    return;
  }
  if (words->empty() || std::ranges::none_of(*words, [](const std::string& w) {
        return w.find("{image}") != std::string::npos; })) {
    s.diag().at(*value, "container.runtime: a runtime template must hold {image}, e.g. "
                        "[\"enroot\", \"start\", \"{image}\"]");
    return;
  }
  container.custom = std::move(*words);
}

// A key that a runtime template leaves to the template itself.
void refuse_with_template(const Section& s, std::string_view key) {
  if (const toml::node* value = s.node(key)) {
    s.diag().at(*value, fmt::format("{}: not with a runtime template (runtime = [...]); put these words "
                                    "in the template", s.label(key)));
  }
}

std::optional<CpuBind> parse_bind(std::string_view text) {
  auto found = std::ranges::find(bind_names(), text);
  if (found == bind_names().end()) {
    return std::nullopt;
  }
  return static_cast<CpuBind>(found - bind_names().begin());
}

// "label=value" needs a label name; a glob needs something to match.
std::optional<std::string> host_pattern_problem(std::string_view pattern) {
  if (pattern.empty()) {
    return "the pattern is empty (a glob on host names, or label=value)";
  }
  if (pattern.find('\0') != std::string_view::npos) {
    return "the pattern contains a NUL byte";
  }
  if (pattern.find('=') == 0) {
    return fmt::format("{} has no label name before '='", quote_input(pattern));
  }
  return std::nullopt;
}

} // namespace

void read_team_keys(const Section& s, const std::string& origin, JobSpec& job, SourcePlaces& places) {
  s.read_string("setup", job.setup);
  places.env_file = read_path(s, "env_file", origin, job.env_file);
}

void read_bind(const Section& launch, JobSpec& job) {
  std::string text;
  if (!launch.read_string("bind", text)) {
    return;
  }
  if (auto bind = parse_bind(text)) {
    job.launch.bind = *bind;
  } else {
    launch.diag().at(*launch.node("bind"), "launch.bind: " + choice_problem(text, bind_names()));
  }
}

void read_container(const SectionInput& in) {
  const Section s = in.keys();
  const toml::node* section = in.node;
  if (section == nullptr) {
    return;
  }
  ContainerSection& container = in.job.container;
  if (!s.read_string("image", container.image) || container.image.empty()) {
    const toml::node* image = s.node("image");
    s.diag().at(image != nullptr ? *image : *section,
                "container.image: the image every rank runs in must be given, e.g. image = \"team/train:1.4\"");
  } else if (container.image.starts_with('-')) {
    s.diag().at(*s.node("image"), fmt::format("container.image: {} starts with '-' (a runtime would read it as "
                                              "an option); name an image, e.g. image = \"team/train:1.4\"",
                                              quote_input(container.image)));
  }
  read_runtime(s, container);
  if (container.runtime == ContainerRuntime::custom) {
    refuse_with_template(s, "mounts");
    refuse_with_template(s, "options");
  } else {
    container.mounts = read_words(s, "mounts", mount_problem).value_or(std::vector<std::string>{});
    container.options = read_words(s, "options", no_problem).value_or(std::vector<std::string>{});
  }
  if (s.read_string("workdir", container.workdir) && !container.workdir.starts_with('/')) {
    s.diag().at(*s.node("workdir"), "container.workdir: must be an absolute path in the container");
  }
}

void read_host_env(const SectionInput& in) {
  const auto* tables = in.table();
  if (tables == nullptr) {
    return;  // absent, or read_sections says it is no table
  }
  JobSpec& job = in.job;
  Diagnostics& diag = in.diag;
  // toml++ keeps keys sorted; a later table of the file wins, so keep its order.
  std::vector<std::tuple<Position, std::string, const toml::node*>> entries;
  for (auto&& [key, value] : *tables) {
    entries.emplace_back(position_of(key.source()), std::string(key.str()), &value);
  }
  std::ranges::stable_sort(entries, [](const auto& a, const auto& b) {
    return std::pair(std::get<0>(a).line, std::get<0>(a).column) < std::pair(std::get<0>(b).line, std::get<0>(b).column);
  });
  for (const auto& [where, pattern, value] : entries) {
    const std::string label = fmt::format("host_env.\"{}\"", escape_control(pattern));
    if (auto problem = host_pattern_problem(pattern)) {
      diag.at(where, fmt::format("host_env: {}", *problem));
    } else if (const auto* table = value->as_table()) {
      job.host_env.push_back({pattern, read_env_table(*table, label, diag)});
    } else {
      diag.at(*value, fmt::format("{}: expected a table of NAME = \"value\", got {}", label,
                                  type_phrase(value->type())));
    }
  }
}

void apply_team_overrides(const Overrides& o, JobSpec& job, const SourcePlaces& places, Diagnostics& diag) {
  if (o.bind) {
    if (auto bind = parse_bind(*o.bind)) {
      job.launch.bind = *bind;
    } else {
      diag.option("--bind: " + choice_problem(*o.bind, bind_names()));
    }
  }
  const bool from_option = o.env_file.has_value();
  if (from_option) {
    if (o.env_file->empty()) {
      diag.option("--env-file: must not be empty");
      return;
    }
    job.env_file = *o.env_file;
  }
  if (job.env_file.empty()) {
    return;
  }
  auto vars = read_env_file(job.env_file);
  if (vars) {
    job.env_file_vars = std::move(*vars);
  } else if (from_option || places.env_file.line == 0) {
    diag.option("--env-file: " + vars.error().message);
  } else {
    diag.at(places.env_file, "job.env_file: " + vars.error().message);
  }
}

} // namespace ddl::job_detail
