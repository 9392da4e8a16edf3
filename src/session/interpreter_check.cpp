// SPDX-License-Identifier: MIT
#include "src/session/interpreter_check.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "src/util/file.hpp"
#include "src/util/run_captured.hpp"
#include "src/util/text.hpp"

namespace ddl::session {

namespace {

constexpr Millis k_probe_timeout{10'000};

bool is_python(const std::string& program) {
  return std::filesystem::path(program).filename().string().starts_with("python");
}

// Whether `python` finds `module` (without importing it: no CUDA start-up).
bool imports(const std::string& python, const std::string& module) {
  auto ran = run_captured({python, "-c", "import importlib.util, sys\nsys.exit(0 if importlib.util.find_spec(sys.argv[1]) "
                                         "else 3)",
                           module},
                          k_probe_timeout);
  return ran && ran->succeeded();
}

std::string real_path(const std::string& path) {
  std::error_code error;
  auto real = std::filesystem::canonical(path, error);
  return error ? path : real.string();
}

// The other Pythons here, in the order a user would try them.
std::vector<std::string> other_pythons(const std::string& chosen) {
  std::vector<std::string> found;
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path != nullptr ? path : "", ':')) {
    if (!dir.empty()) {
      found.push_back(dir + "/python3");
    }
  }
  found.insert(found.end(), {"/usr/bin/python3", "/usr/local/bin/python3"});
  std::vector<std::string> others;
  const std::string mine = real_path(chosen);
  for (const auto& candidate : found) {
    if (::access(candidate.c_str(), X_OK) == 0 && real_path(candidate) != mine &&
        std::find(others.begin(), others.end(), candidate) == others.end()) {
      others.push_back(candidate);
    }
  }
  return others;
}

} // namespace

void warn_interpreter_without(const JobSpec& job, const std::string& module) {
  if (job.command.empty() || job.command_is_shell || !is_python(job.command.front())) {
    return;
  }
  std::string chosen = job.command.front();
  if (chosen.find('/') == std::string::npos) {
    const char* path = std::getenv("PATH");
    auto found = find_on_path(chosen, path != nullptr ? path : "");
    if (!found) {
      return;
    }
    chosen = *found;
  }
  if (::access(chosen.c_str(), X_OK) != 0 || imports(chosen, module)) {
    return;
  }
  for (const auto& other : other_pythons(chosen)) {
    if (imports(other, module)) {
      spdlog::warn("{} cannot import {}, which this job needs; {} can: pick it with --python {} or [job] python "
                   "= \"{}\"",
                   chosen, module, other, other, other);
      return;
    }
  }
}

} // namespace ddl::session
