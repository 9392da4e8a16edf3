// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

// What a prefix template may name for one rank's line.
struct PrefixFields {
  int rank = 0;
  std::string_view host;
  int local_rank = 0;
  int attempt = 0;       // 0 first, as DDL_ATTEMPT
  bool partial = false;  // the line goes on in the next piece ({partial} is "+")
};

// The text before each rank line on ddl's stdout/stderr (--prefix,
// job.prefix): literal text with {rank}, {host}, {local_rank}, {attempt},
// {partial}; "{{" and "}}" are literal braces.
class LinePrefix {
public:
  // "[{rank}{partial}] ": ddl's own "[3] " and "[3+] ".
  static LinePrefix standard();
  // nullopt and `problem` set for an unknown field or an unclosed brace.
  static std::optional<LinePrefix> parse(std::string_view text, std::string& problem);

  std::string render(const PrefixFields& fields) const;
  const std::string& text() const { return text_; }
  bool uses_partial() const;

  static const std::vector<std::string>& field_names();

private:
  struct Piece {
    std::string literal;  // used when field is empty
    std::string field;
  };
  std::string text_;
  std::vector<Piece> pieces_;
};

// torchrun's TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE (Python string.Template
// with safe_substitute: "${rank}" or "$rank", "${local_rank}",
// "${role_name}", "$$" for "$"; anything else stays as written) as a ddl
// template. role_name is "default", as ROLE_NAME is.
std::string from_torch_template(std::string_view torch);

} // namespace ddl
