// SPDX-License-Identifier: MIT
#include "src/util/runtime_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/core.h>

namespace ddl {

std::string runtime_dir_path() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && *xdg == '/') {
    return std::string(xdg) + "/ddl";
  }
  return fmt::format("/tmp/ddl-{}", ::geteuid());
}

namespace {

// Why `path` (lstat'ed into `info`) is no safe folder of this user; "" when it is.
std::string unsafe_because(const struct stat& info) {
  if (!S_ISDIR(info.st_mode)) {
    return "is not a folder";
  }
  if (info.st_uid != ::geteuid()) {
    return fmt::format("is owned by uid {}, not by you (uid {})", info.st_uid, ::geteuid());
  }
  if ((info.st_mode & 077) != 0) {
    return fmt::format("has mode {:04o}; it must be 0700", info.st_mode & 07777);
  }
  return "";
}

bool fill_address(const std::string& path, sockaddr_un& address) {
  address = {};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    return false;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return true;
}

} // namespace

Result<std::string> runtime_dir(bool create) {
  const std::string path = runtime_dir_path();
  if (create && ::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail(ExitCode::launch, fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return fail(ExitCode::launch, fmt::format("{}: {}", path, std::strerror(errno)));
  }
  if (std::string why = unsafe_because(info); !why.empty()) {
    return fail(ExitCode::launch, fmt::format("{} {}; ddl keeps its job sockets only in a folder of your own "
                                              "(remove it, or set XDG_RUNTIME_DIR)",
                                              path, why));
  }
  return path;
}

Result<int> listen_unix(const std::string& path) {
  sockaddr_un address{};
  if (!fill_address(path, address)) {
    return fail(ExitCode::launch, fmt::format("{}: the path is too long for a unix socket", path));
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return fail(ExitCode::launch, fmt::format("socket: {}", std::strerror(errno)));
  }
  ::unlink(path.c_str());
  // Only this user may connect: the folder is 0700 already, the socket 0600 too.
  mode_t old_mask = ::umask(0177);
  int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    std::string reason = std::strerror(errno);
    ::close(fd);
    return fail(ExitCode::launch, fmt::format("cannot listen at {}: {}", path, reason));
  }
  return fd;
}

Result<std::optional<int>> try_connect_unix(const std::string& path) {
  sockaddr_un address{};
  if (!fill_address(path, address)) {
    errno = ENAMETOOLONG;
    return fail(ExitCode::launch, fmt::format("{}: the path is too long for a unix socket", path));
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return fail(ExitCode::launch, fmt::format("socket: {}", std::strerror(errno)));
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    if (saved == EAGAIN) {
      return std::optional<int>();  // the backlog is full
    }
    return fail(ExitCode::launch, fmt::format("cannot connect to {}: {}", path, std::strerror(saved)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  auto uid = peer_uid(fd);
  if (!uid || *uid != ::geteuid()) {
    ::close(fd);
    errno = EPERM;
    return fail(ExitCode::launch, fmt::format("{} is served by uid {}, not by you; not used", path,
                                              uid ? std::to_string(*uid) : "unknown"));
  }
  return std::optional<int>(fd);
}

std::optional<uid_t> peer_uid(int fd) {
  ucred credentials{};
  socklen_t size = sizeof credentials;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
    return std::nullopt;
  }
  return credentials.uid;
}

} // namespace ddl
