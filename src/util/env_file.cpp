// SPDX-License-Identifier: MIT
#include "src/util/env_file.hpp"

#include <algorithm>
#include <optional>
#include <system_error>

#include <fmt/core.h>

#include "src/util/file.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr std::size_t k_max_env_file_bytes = std::size_t{1} << 20;

// The value after '=': quoted or bare. nullopt and `why` set when malformed.
std::optional<std::string> parse_value(std::string_view text, std::string& why) {
  text = trim(text);
  if (text.empty() || (text.front() != '"' && text.front() != '\'')) {
    return std::string(text);
  }
  const char quote = text.front();
  std::string value;
  std::size_t i = 1;
  for (; i < text.size() && text[i] != quote; ++i) {
    if (quote == '"' && text[i] == '\\' && i + 1 < text.size()) {
      const char next = text[++i];
      value += next == 'n' ? '\n' : next == 't' ? '\t' : next;
    } else {
      value += text[i];
    }
  }
  if (i >= text.size()) {
    why = fmt::format("the value has no closing {}", quote);
    return std::nullopt;
  }
  if (!trim(text.substr(i + 1)).empty()) {
    why = fmt::format("text after the closing {}", quote);
    return std::nullopt;
  }
  return value;
}

void set_value(EnvList& env, std::string name, std::string value) {
  auto existing = std::ranges::find_if(env, [&](const auto& kv) { return kv.first == name; });
  if (existing != env.end()) {
    existing->second = std::move(value);
  } else {
    env.emplace_back(std::move(name), std::move(value));
  }
}

} // namespace

Result<EnvList> parse_env_file(std::string_view text, const std::string& origin) {
  EnvList env;
  int number = 0;
  for (const std::string& raw : split(text, '\n')) {
    ++number;
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') {
      continue;
    }
    if (line.starts_with("export ") || line.starts_with("export\t")) {
      line = trim(line.substr(7));
    }
    auto problem = [&](const std::string& why) {
      return fail(ExitCode::usage, fmt::format("{}:{}: {}", origin, number, why));
    };
    // An error quotes at most the name: the line may be a secret's value.
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      return problem("not NAME=VALUE (no '='; the line is not shown: it may hold a secret)");
    }
    std::string name(trim(line.substr(0, equals)));
    if (!is_env_name(name)) {
      return problem(fmt::format("{} is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", quote_input(name)));
    }
    if (line.find('\0', equals) != std::string_view::npos) {
      return problem(name + ": the value holds a NUL byte, which no environment variable can");
    }
    std::string why;
    auto value = parse_value(line.substr(equals + 1), why);
    if (!value) {
      return problem(name + ": " + why);
    }
    set_value(env, std::move(name), std::move(*value));
  }
  return env;
}

Result<EnvList> read_env_file(const std::string& path) {
  CappedRead file = read_capped(path, k_max_env_file_bytes);
  switch (file.status) {
  case CappedRead::Status::ok: return parse_env_file(file.text, path);
  case CappedRead::Status::directory: return fail(ExitCode::usage, path + ": is a directory, not an env file");
  case CappedRead::Status::too_large:
    return fail(ExitCode::usage, fmt::format("{}: env file is larger than {} bytes", path, k_max_env_file_bytes));
  case CappedRead::Status::cannot_open:
  case CappedRead::Status::read_error: break;
  }
  return fail(ExitCode::usage, fmt::format("{}: cannot read env file: {}", path,
                                           std::generic_category().message(file.error)));
}

} // namespace ddl
