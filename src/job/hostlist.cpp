// SPDX-License-Identifier: MIT
// Slurm-style hostlist expansion: "node[01-04,07]:8,gpu-a:4".
#include <algorithm>
#include <charconv>

#include <fmt/core.h>

#include "src/job/hostlist.hpp"
#include "src/job/limits.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr std::size_t k_max_number_digits = 9;

Unexpected bad(std::string message) {
  return fail(ExitCode::usage, std::move(message));
}

std::optional<long long> number(std::string_view digits) {
  if (digits.empty() || digits.size() > k_max_number_digits) {
    return std::nullopt;
  }
  return parse_int(digits);
}

// "01-04,07" -> {"01","02","03","04","07"}; `item` is for messages.
Result<std::vector<std::string>> expand_ranges(std::string_view ranges, std::string_view item) {
  std::vector<std::string> out;
  if (ranges.empty()) {
    return bad(fmt::format("empty brackets in {}", quote_input(item)));
  }
  for (const std::string& range : split(ranges, ',')) {
    std::size_t dash = range.find('-');
    std::string_view low_text = std::string_view(range).substr(0, dash);
    std::string_view high_text =
        dash == std::string::npos ? low_text : std::string_view(range).substr(dash + 1);
    auto low = number(low_text);
    auto high = number(high_text);
    if (!low || !high) {
      return bad(fmt::format("bad range {} in {}", quote_input(range), quote_input(item)));
    }
    if (*high < *low) {
      return bad(fmt::format("reversed range {} in {}", quote_input(range), quote_input(item)));
    }
    if (static_cast<std::size_t>(*high - *low) + out.size() >= k_max_hosts) {
      return bad(fmt::format("{} expands to more than {} hosts", quote_input(item), k_max_hosts));
    }
    // A leading zero fixes the width: 01-10 -> 01..10.
    std::size_t width = low_text.size() > 1 && low_text[0] == '0' ? low_text.size() : 0;
    for (long long n = *low; n <= *high; ++n) {
      out.push_back(fmt::format("{:0{}}", n, width));
    }
  }
  return out;
}

// "r[1-2]n[1-2]-ib" -> r1n1-ib, r1n2-ib, r2n1-ib, r2n2-ib (leftmost slowest).
Result<std::vector<std::string>> expand_name(std::string_view name, std::string_view item) {
  std::vector<std::string> names = {""};
  std::size_t pos = 0;
  while (pos < name.size()) {
    std::size_t open = name.find_first_of("[]", pos);
    std::string_view literal = name.substr(pos, open == std::string_view::npos ? name.npos
                                                                               : open - pos);
    for (std::string& partial : names) {
      partial += literal;
    }
    if (open == std::string_view::npos) {
      break;
    }
    if (name[open] == ']') {
      return bad(fmt::format("']' without '[' in {}", quote_input(item)));
    }
    std::size_t close = name.find_first_of("[]", open + 1);
    if (close == std::string_view::npos) {
      return bad(fmt::format("'[' without ']' in {}", quote_input(item)));
    }
    if (name[close] == '[') {
      return bad(fmt::format("nested '[' in {}", quote_input(item)));
    }
    auto values = expand_ranges(name.substr(open + 1, close - open - 1), item);
    if (!values) {
      return fail(values.error());
    }
    if (names.size() * values->size() > k_max_hosts) {
      return bad(fmt::format("{} expands to more than {} hosts", quote_input(item), k_max_hosts));
    }
    std::vector<std::string> product;
    product.reserve(names.size() * values->size());
    for (const std::string& partial : names) {
      for (const std::string& value : *values) {
        product.push_back(partial + value);
      }
    }
    names = std::move(product);
    pos = close + 1;
  }
  return names;
}

Result<std::optional<int>> parse_slots(std::string_view text, std::string_view item) {
  auto slots = number(text);
  if (!slots || *slots < 1) {
    return bad(fmt::format("bad slot count {} in {}", quote_input(text), quote_input(item)));
  }
  if (*slots > k_max_world_size) {
    return bad(fmt::format("slot count {} in {} is above ddl's limit of {}", quote_input(text), quote_input(item),
                           k_max_world_size));
  }
  return std::optional<int>(static_cast<int>(*slots));
}

// An IPv6 address as a host is written: hex digits, ':' and '.', then any "%zone".
bool looks_like_ipv6(std::string_view text) {
  std::string_view address = text.substr(0, text.find('%'));
  return address.find_first_not_of("0123456789abcdefABCDEF:.") == address.npos;
}

// One comma-separated item: "[v6]:slots", bare IPv6, or "pattern[:slots]".
Result<std::vector<HostSpec>> expand_item(std::string_view item) {
  if (item.starts_with('[')) {
    std::size_t close = item.find(']');
    if (close == item.npos) {
      return bad(fmt::format("'[' without ']' in {}", quote_input(item)));
    }
    std::string_view inside = item.substr(1, close - 1);
    if (inside.find(':') != item.npos) {
      if (!looks_like_ipv6(inside)) {
        return bad(fmt::format("bad IPv6 address {} in {}", quote_input(inside), quote_input(item)));
      }
      std::string_view rest = item.substr(close + 1);
      HostSpec host{std::string(inside), std::nullopt, {}, {}};
      if (!rest.empty() && rest[0] != ':') {
        return bad(fmt::format("unexpected {} after ']' in {}", quote_input(rest), quote_input(item)));
      }
      if (!rest.empty()) {
        auto slots = parse_slots(rest.substr(1), item);
        if (!slots) {
          return fail(slots.error());
        }
        host.slots = *slots;
      }
      return std::vector<HostSpec>{host};
    }
  }
  std::size_t colon = item.find(':');
  std::string_view pattern = item;
  std::optional<int> slots;
  bool bare_ipv6 = colon != item.npos && item.find(':', colon + 1) != item.npos &&
                   item.find_first_of("[]") == item.npos;
  if (bare_ipv6) {
    if (!looks_like_ipv6(item)) {
      return bad(fmt::format("bad host {}: write an IPv6 address with slots as [ADDRESS]:SLOTS",
                             quote_input(item)));
    }
    return std::vector<HostSpec>{HostSpec{std::string(item), std::nullopt, {}, {}}};
  }
  if (colon != item.npos) {
    pattern = item.substr(0, colon);
    auto parsed = parse_slots(item.substr(colon + 1), item);
    if (!parsed) {
      return fail(parsed.error());
    }
    slots = *parsed;
  }
  if (pattern.empty()) {
    return bad(fmt::format("empty host name in {}", quote_input(item)));
  }
  auto names = expand_name(pattern, item);
  if (!names) {
    return fail(names.error());
  }
  std::vector<HostSpec> hosts;
  hosts.reserve(names->size());
  for (std::string& name : *names) {
    hosts.push_back(HostSpec{std::move(name), slots, {}, {}});
  }
  return hosts;
}

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == text.npos;
}

// A login name as ssh takes it: no '-' first, nothing a shell or ssh reads.
std::optional<std::string> user_problem(std::string_view user) {
  if (user.empty()) {
    return "an empty user before '@'";
  }
  if (user.starts_with('-')) {
    return "a user that starts with '-'";
  }
  if (user.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != user.npos) {
    return "a user with other than letters, digits, '.', '_' and '-'";
  }
  return std::nullopt;
}

// The login parts of an item, pdsh's "user@" and ssh's port: "ml@gpu-a:2222:8"
// -> user "ml", port 2222, and "gpu-a:8" left for expand_item. A port is
// only ever the first of two numbers after the name, so "gpu-a:8" stays 8
// slots; exactly two colons without "::" is never an IPv6 address.
Result<std::string> split_login(std::string_view item, HostSpec& login) {
  if (std::size_t at = item.find('@'); at != item.npos) {
    if (auto problem = user_problem(item.substr(0, at))) {
      return bad(fmt::format("{} in {}", *problem, quote_input(item)));
    }
    login.user = std::string(item.substr(0, at));
    item = item.substr(at + 1);
  }
  const bool bracketed = item.starts_with('[');
  std::size_t name_end = bracketed ? item.find(']') : item.find(':');
  if (name_end == item.npos) {
    return std::string(item);
  }
  name_end += bracketed ? 1 : 0;
  std::string_view tail = item.substr(name_end);  // ":port:slots" when a port is given
  std::size_t second = tail.find(':', 1);
  if (!tail.starts_with(':') || second == tail.npos || !all_digits(tail.substr(1, second - 1)) ||
      !all_digits(tail.substr(second + 1))) {
    return std::string(item);
  }
  auto port = number(tail.substr(1, second - 1));
  if (!port || *port < 1 || *port > 65535) {
    return bad(fmt::format("bad port {} in {}: 1 to 65535", quote_input(tail.substr(1, second - 1)), quote_input(item)));
  }
  login.port = static_cast<int>(*port);
  return std::string(item.substr(0, name_end)) + std::string(tail.substr(second));
}

// An item with its login parts (split_login), then expanded.
Result<std::vector<HostSpec>> expand_login_item(std::string_view item) {
  HostSpec login;
  auto rest = split_login(item, login);
  if (!rest) {
    return fail(rest.error());
  }
  auto hosts = expand_item(*rest);
  if (!hosts) {
    return fail(hosts.error());
  }
  for (HostSpec& host : *hosts) {
    host.user = login.user;
    host.port = login.port;
  }
  return hosts;
}

bool is_label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '/' || c == '-';
}

// "node[01-02]:8 rack=r1": the host part, then its labels.
Result<std::vector<HostSpec>> expand_labelled_item(std::string_view item) {
  std::size_t blank = item.find_first_of(" \t");
  if (blank == std::string_view::npos) {
    return expand_login_item(item);
  }
  Labels labels;
  std::string words(item.substr(blank));
  std::ranges::replace(words, '\t', ' ');
  for (const std::string& word : split(words, ' ')) {
    std::string_view label = trim(word);
    if (label.empty()) {
      continue;
    }
    if (label.find('=') == std::string_view::npos) {
      return expand_login_item(item);  // not a label: a host name with a space, refused as such
    }
    if (auto why = add_label(label, labels)) {
      return bad(fmt::format("{} in {}", *why, quote_input(item)));
    }
  }
  auto hosts = expand_login_item(item.substr(0, blank));
  if (hosts) {
    for (HostSpec& host : *hosts) {
      host.labels = labels;
    }
  }
  return hosts;
}

} // namespace

std::optional<std::string> add_label(std::string_view word, Labels& labels) {
  const std::size_t eq = word.find('=');
  const std::string_view key = word.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view{} : word.substr(eq + 1);
  if (eq == std::string_view::npos || key.empty() || !std::ranges::all_of(key, is_label_char) ||
      !std::ranges::all_of(value, is_label_char)) {
    return fmt::format("bad label {}: expected KEY=VALUE of letters, digits and . _ / -", quote_input(word));
  }
  if (!labels.emplace(std::string(key), std::string(value)).second) {
    return fmt::format("label {} given twice", quote_input(key));
  }
  return std::nullopt;
}

std::string format_labels(const Labels& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    out += (out.empty() ? "" : " ") + key + "=" + value;
  }
  return out;
}

std::string bracket_ipv6(std::string_view host) {
  return host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
}

std::string format_login(std::string_view user, std::string_view host, std::optional<int> port) {
  const std::string address = port ? bracket_ipv6(host) + ":" + std::to_string(*port) : std::string(host);
  return user.empty() ? address : std::string(user) + "@" + address;
}

std::string format_host_spec(const HostSpec& spec) {
  std::string text;
  if (spec.port) {
    text = format_login(spec.user, spec.name, spec.port) + ":" + std::to_string(spec.slots.value_or(1));
  } else {
    text = (spec.user.empty() ? "" : spec.user + "@") + (spec.slots ? bracket_ipv6(spec.name) : spec.name);
    if (spec.slots) {
      text += ":" + std::to_string(*spec.slots);
    }
  }
  if (!spec.labels.empty()) {
    text += " " + format_labels(spec.labels);
  }
  return text;
}

Result<std::vector<HostSpec>> expand_hostlist(std::string_view text) {
  if (trim(text).empty()) {
    return bad("empty host list");
  }
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '[') {
      ++depth;
    } else if (c == ']' && depth > 0) {
      --depth;
    } else if (c == ',' && (depth == 0 || i == text.size())) {
      items.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::vector<HostSpec> hosts;
  for (std::string_view item : items) {
    if (item.empty()) {
      return bad(fmt::format("empty host in {}", quote_input(text)));
    }
    auto expanded = expand_labelled_item(item);
    if (!expanded) {
      return fail(expanded.error());
    }
    if (hosts.size() + expanded->size() > k_max_hosts) {
      return bad(fmt::format("{} expands to more than {} hosts", quote_input(text), k_max_hosts));
    }
    hosts.insert(hosts.end(), expanded->begin(), expanded->end());
  }
  return hosts;
}

} // namespace ddl
