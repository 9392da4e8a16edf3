// SPDX-License-Identifier: MIT
#include "src/util/text.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>

namespace ddl {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and
  // swaps of two neighbours ("rnu" -> "run") each cost one.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) {
    d[i][0] = i;
  }
  std::iota(d[0].begin(), d[0].end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

namespace {

std::string_view without_dashes(std::string_view word) {
  return word.substr(std::min(word.find_first_not_of('-'), word.size()));
}

} // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  // A typo is at most one edit in three letters, and leaves more of the word
  // than it changes: "-u" is no typo of "-h".
  const std::string_view core = without_dashes(word);
  const std::size_t limit = std::max<std::size_t>(1, core.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(core, without_dashes(candidate));
    if (distance < best_distance && distance < core.size()) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(sep, start);
    if (end == std::string_view::npos) {
      parts.emplace_back(text.substr(start));
      return parts;
    }
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) {
    return text;
  }
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string_view trim(std::string_view text) {
  const char* spaces = " \t\r\n";
  std::size_t first = text.find_first_not_of(spaces);
  if (first == std::string_view::npos) {
    return {};
  }
  std::size_t last = text.find_last_not_of(spaces);
  return text.substr(first, last - first + 1);
}

std::optional<long long> parse_int(std::string_view text) {
  if (text.empty() || text[0] == '+' || text[0] == '-') {
    return std::nullopt;
  }
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

std::string shell_quote(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

std::string last_lines(std::string_view text, std::size_t count) {
  text = trim(text);
  std::size_t at = text.size();
  for (std::size_t n = 0; n < count && at != std::string_view::npos && at > 0; ++n) {
    at = text.rfind('\n', at - 1);
  }
  std::string out;
  for (const std::string& line : split(trim(at == std::string_view::npos ? text : text.substr(at)), '\n')) {
    out += (out.empty() ? "" : "\n") + clip(line);
  }
  return out;
}

namespace {

bool is_control(char c) {
  auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

std::string hex_escape(char c) {
  static constexpr char k_hex[] = "0123456789abcdef";
  auto byte = static_cast<unsigned char>(c);
  return {'\\', 'x', k_hex[byte >> 4], k_hex[byte & 15]};
}

// The first `max` bytes of `text`, shortened so that no UTF-8 character is cut.
std::string_view utf8_head(std::string_view text, std::size_t max) {
  std::size_t size = std::min(max, text.size());
  while (size > 0 && size < text.size() && (static_cast<unsigned char>(text[size]) & 0xC0) == 0x80) {
    --size;
  }
  return text.substr(0, size);
}

std::string length_note(std::size_t size) { return " (" + std::to_string(size) + " bytes)"; }

} // namespace

std::string clip(std::string_view text, std::size_t max) {
  if (text.size() <= max) {
    return std::string(text);
  }
  return std::string(utf8_head(text, max)) + "…" + length_note(text.size());
}

std::string quote_input(std::string_view text, std::size_t max) {
  std::string out = "'";
  for (char c : utf8_head(text, max)) {
    out += is_control(c) ? hex_escape(c) : std::string(1, c);
  }
  return text.size() <= max ? out + "'" : out + "…'" + length_note(text.size());
}

namespace {

// The escape of one control byte: \n, \t, \r, \e or \xNN.
std::string control_escape(char c) {
  switch (c) {
  case '\n': return "\\n";
  case '\t': return "\\t";
  case '\r': return "\\r";
  case '\x1b': return "\\e";
  default: return hex_escape(c);
  }
}

bool plain_word(std::string_view word) {
  return !word.empty() && std::ranges::all_of(word, [](char c) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    return alnum || std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  });
}

} // namespace

std::string escape_control(std::string_view text) {
  if (std::ranges::none_of(text, is_control)) {
    return std::string(text);
  }
  std::string out;
  for (char c : text) {
    out += is_control(c) ? control_escape(c) : std::string(1, c);
  }
  return out;
}

std::string shell_word(std::string_view word) {
  if (plain_word(word)) {
    return std::string(word);
  }
  if (std::ranges::none_of(word, is_control)) {
    return shell_quote(word);
  }
  std::string out = "$'";
  for (char c : word) {
    if (is_control(c)) {
      out += control_escape(c);
    } else if (c == '\'' || c == '\\') {
      out += {'\\', c};
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    bool ok = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k) {
      ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (ok && length > 1) {
      // Overlong forms, surrogates and code points above U+10FFFF.
      auto second = static_cast<unsigned char>(text[i + 1]);
      ok = !(lead == 0xC0 || lead == 0xC1 || (lead == 0xE0 && second < 0xA0) || (lead == 0xED && second >= 0xA0) ||
             (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second >= 0x90) || lead > 0xF4);
    }
    if (ok) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      ++i;
    }
  }
  return out;
}

} // namespace ddl
