// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_config_scan.hpp"

#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>
#include <string_view>

#include "backends/ssh/ssh_connect.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr int kMaxIncludeDepth = 8;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "Key value", "Key=value" or "Key = value": the key, lower-cased, and the rest.
std::pair<std::string, std::string> keyword(std::string_view line) {
  line = trim(line);
  std::size_t end = line.find_first_of(" \t=");
  std::string key = lower(line.substr(0, end));
  std::string_view rest = end == std::string_view::npos ? std::string_view() : line.substr(end);
  rest = trim(rest);
  if (!rest.empty() && rest.front() == '=') rest = trim(rest.substr(1));
  return {key, std::string(rest)};
}

bool may_set_hostname(const std::string& path, int depth);

// An Include of a relative path is left to libssh (which resolves it against
// the home of the password database, not $HOME): it counts as one that may.
bool include_may_set_hostname(const std::string& patterns, int depth) {
  std::string spaced = patterns;
  std::replace(spaced.begin(), spaced.end(), '\t', ' ');
  for (const std::string& word : split(spaced, ' ')) {
    if (word.empty()) continue;
    if (word[0] != '/' && word[0] != '~') return true;
    std::string pattern = expand_home(word);
    glob_t found{};
    int rc = ::glob(pattern.c_str(), 0, nullptr, &found);
    bool may = rc != 0 && rc != GLOB_NOMATCH;
    for (std::size_t i = 0; !may && rc == 0 && i < found.gl_pathc; ++i) {
      may = may_set_hostname(found.gl_pathv[i], depth + 1);
    }
    ::globfree(&found);
    if (may) return true;
  }
  return false;
}

bool may_set_hostname(const std::string& path, int depth) {
  if (depth > kMaxIncludeDepth) return true;
  std::ifstream in(path);
  if (!in) return true;
  std::string line;
  while (std::getline(in, line)) {
    auto [key, rest] = keyword(line);
    if (key == "hostname") return true;
    if (key == "include" && include_may_set_hostname(rest, depth)) return true;
  }
  return in.bad();
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

} // namespace

bool ssh_config_may_set_hostname(const SshSection& options) {
  if (options.config == "none") return false;
  std::string user = expand_home(options.config);
  if (exists(user) && may_set_hostname(user, 0)) return true;
  const std::string system = "/etc/ssh/ssh_config";
  return exists(system) && may_set_hostname(system, 0);
}

} // namespace ddl
