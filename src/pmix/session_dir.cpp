// SPDX-License-Identifier: MIT
#include "src/pmix/session_dir.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "src/util/process.hpp"

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

constexpr const char* k_shm_base = "/dev/shm";

// mkdtemp of BASE/ddl-pmix.HOST.XXXXXX: the folder's path, or "" (errno set).
std::string make_unique_dir(const std::string& base, const std::string& host) {
  std::string pattern = base + "/ddl-pmix." + file_safe(host) + ".XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  return ::mkdtemp(buffer.data()) != nullptr ? std::string(buffer.data()) : std::string();
}

Result<void> make_subdir(const std::string& path, const char* what) {
  if (::mkdir(path.c_str(), 0700) != 0) {
    return fail(ExitCode::launch,
                fmt::format("cannot make the PMIx {} folder {}: {}", what, path, std::strerror(errno)));
  }
  return {};
}

} // namespace

Result<SessionDir> SessionDir::create(const std::string& host) {
  SessionDir dir;
  dir.path_ = make_unique_dir(temp_base(), host);
  if (dir.path_.empty()) {
    return fail(ExitCode::launch, fmt::format("cannot make the PMIx server's folder under {}: {}",
                                              temp_base(), std::strerror(errno)));
  }
  dir.nsdir_ = dir.path_ + "/job";
  if (auto made = make_subdir(dir.nsdir_, "job"); !made) {
    return fail(made.error());
  }
  if (::access(k_shm_base, W_OK | X_OK) == 0) {
    dir.shm_ = make_unique_dir(k_shm_base, host);
  }
  if (dir.shm_.empty()) {
    dir.shm_ = dir.path_ + "/shm";
    if (auto made = make_subdir(dir.shm_, "shared-memory"); !made) {
      return fail(made.error());
    }
  }
  dir.start_remover();
  return dir;
}

// Best effort: without it (no /bin/sh) only a SIGKILL leaves the folders.
void SessionDir::start_remover() {
  SpawnSpec spec;
  spec.program = "/bin/sh";
  spec.argv = {"sh", "-c", "exec >/dev/null 2>&1; cat; exec rm -rf -- \"$@\"", "ddl-pmix-remover", path_, shm_};
  spec.env = environment_with({});
  spec.stdin_pipe = true;
  spec.group = ProcessGroup::new_session;  // not ended with the job's group
  spec.ignore_sigpipe = true;
  SpawnResult spawned = spawn_process(spec);
  if (!spawned) {
    return;
  }
  close_fd(spawned.child.out_fd);
  close_fd(spawned.child.err_fd);
  remover_fd_ = spawned.child.in_fd;
  remover_pid_ = spawned.child.pid;
}

SessionDir::SessionDir(SessionDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), nsdir_(std::exchange(other.nsdir_, {})),
      shm_(std::exchange(other.shm_, {})), remover_fd_(std::exchange(other.remover_fd_, -1)),
      remover_pid_(std::exchange(other.remover_pid_, -1)) {}

SessionDir& SessionDir::operator=(SessionDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
    nsdir_ = std::exchange(other.nsdir_, {});
    shm_ = std::exchange(other.shm_, {});
    remover_fd_ = std::exchange(other.remover_fd_, -1);
    remover_pid_ = std::exchange(other.remover_pid_, -1);
  }
  return *this;
}

SessionDir::~SessionDir() { remove(); }

void SessionDir::remove() {
  std::error_code ignored;
  if (!shm_.empty()) {
    std::filesystem::remove_all(shm_, ignored);
    shm_.clear();
  }
  if (!path_.empty()) {
    std::filesystem::remove_all(path_, ignored);
    path_.clear();
  }
  close_fd(remover_fd_);  // nothing left for it to remove: it ends
  if (remover_pid_ > 0) {
    while (::waitpid(remover_pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    remover_pid_ = -1;
  }
}

} // namespace ddl::pmix
