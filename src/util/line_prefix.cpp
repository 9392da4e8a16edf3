// SPDX-License-Identifier: MIT
#include "src/util/line_prefix.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl {

const std::vector<std::string>& LinePrefix::field_names() {
  static const std::vector<std::string> names = {"rank", "host", "local_rank", "attempt", "partial"};
  return names;
}

LinePrefix LinePrefix::standard() {
  std::string problem;
  return *parse("[{rank}{partial}] ", problem);
}

std::optional<LinePrefix> LinePrefix::parse(std::string_view text, std::string& problem) {
  LinePrefix prefix;
  prefix.text_ = std::string(text);
  std::string literal;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal += c;
      ++i;
      continue;
    }
    if (c == '}') {
      problem = "a '}' without its '{' (write '}}' for a brace)";
      return std::nullopt;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    std::size_t close = text.find('}', i);
    if (close == std::string_view::npos) {
      problem = "a '{' without its '}' (write '{{' for a brace)";
      return std::nullopt;
    }
    std::string name(text.substr(i + 1, close - i - 1));
    if (std::ranges::find(field_names(), name) == field_names().end()) {
      std::string near = did_you_mean(name, field_names());
      problem = fmt::format("unknown field {{{}}}{}; the fields are {{rank}}, {{host}}, {{local_rank}}, "
                            "{{attempt}} and {{partial}}",
                            name, near.empty() ? "" : fmt::format(" (did you mean {{{}}}?)", near));
      return std::nullopt;
    }
    if (!literal.empty()) {
      prefix.pieces_.push_back({std::exchange(literal, {}), ""});
    }
    prefix.pieces_.push_back({"", name});
    i = close;
  }
  if (!literal.empty()) {
    prefix.pieces_.push_back({literal, ""});
  }
  return prefix;
}

bool LinePrefix::uses_partial() const {
  return std::ranges::any_of(pieces_, [](const Piece& piece) { return piece.field == "partial"; });
}

std::string LinePrefix::render(const PrefixFields& fields) const {
  std::string out;
  for (const Piece& piece : pieces_) {
    if (piece.field.empty()) {
      out += piece.literal;
    } else if (piece.field == "rank") {
      out += std::to_string(fields.rank);
    } else if (piece.field == "host") {
      out += fields.host;
    } else if (piece.field == "local_rank") {
      out += std::to_string(fields.local_rank);
    } else if (piece.field == "attempt") {
      out += std::to_string(fields.attempt);
    } else if (piece.field == "partial" && fields.partial) {
      out += '+';
    }
  }
  return out;
}

namespace {

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The ddl text for torch's placeholder `name`; nullopt: safe_substitute
// leaves it as written.
std::optional<std::string> torch_field(std::string_view name) {
  if (name == "rank" || name == "local_rank") {
    return "{" + std::string(name) + "}";
  }
  if (name == "role_name") {
    return "default";
  }
  return std::nullopt;
}

// Literal text in a ddl template.
std::string escape_braces(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '{' || c == '}') {
      out += c;
    }
  }
  return out;
}

} // namespace

std::string from_torch_template(std::string_view torch) {
  std::string out;
  for (std::size_t i = 0; i < torch.size(); ++i) {
    if (torch[i] != '$' || i + 1 >= torch.size()) {
      out += escape_braces(torch.substr(i, 1));
      continue;
    }
    if (torch[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    std::size_t start = i + 1;
    bool braced = torch[start] == '{';
    std::size_t name_start = braced ? start + 1 : start;
    std::size_t end = name_start;
    if (end < torch.size() && is_identifier_start(torch[end])) {
      while (end < torch.size() && is_identifier_char(torch[end])) {
        ++end;
      }
    }
    bool complete = end > name_start && (!braced || (end < torch.size() && torch[end] == '}'));
    auto field = complete ? torch_field(torch.substr(name_start, end - name_start)) : std::nullopt;
    if (!field) {
      out += '$';  // left as written, like safe_substitute
      continue;
    }
    out += *field;
    i = braced ? end : end - 1;
  }
  return out;
}

} // namespace ddl
