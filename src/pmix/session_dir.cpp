// SPDX-License-Identifier: MIT
#include "src/pmix/session_dir.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace ddl::pmix {

namespace {

// The host's name as a file name: letters, digits, '.', '-' and '_' kept.
std::string file_safe(const std::string& host) {
  std::string safe;
  for (char c : host) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-' || c == '_';
    safe += keep ? c : '_';
  }
  return safe.substr(0, 64);
}

std::string temp_base() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

} // namespace

Result<SessionDir> SessionDir::create(const std::string& host) {
  std::string pattern = temp_base() + "/ddl-pmix." + file_safe(host) + ".XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    return fail(ExitCode::launch, fmt::format("cannot make the PMIx server's folder {}: {}",
                                              pattern, std::strerror(errno)));
  }
  SessionDir dir;
  dir.path_ = buffer.data();
  dir.nsdir_ = dir.path_ + "/job";
  if (::mkdir(dir.nsdir_.c_str(), 0700) != 0) {
    return fail(ExitCode::launch, fmt::format("cannot make the PMIx job folder {}: {}",
                                              dir.nsdir_, std::strerror(errno)));
  }
  return dir;
}

SessionDir::SessionDir(SessionDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), nsdir_(std::exchange(other.nsdir_, {})) {}

SessionDir& SessionDir::operator=(SessionDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
    nsdir_ = std::exchange(other.nsdir_, {});
  }
  return *this;
}

SessionDir::~SessionDir() { remove(); }

void SessionDir::remove() {
  if (!path_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    path_.clear();
  }
}

} // namespace ddl::pmix
