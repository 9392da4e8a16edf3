// SPDX-License-Identifier: MIT
#include "src/util/own_path.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

namespace ddl {

std::string describe_owner(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return fmt::format("uid {} ({})", uid, found->pw_name);
  }
  return fmt::format("uid {}", uid);
}

namespace {

// Symbolic links followed at most, as the kernel's limit.
constexpr int k_max_links = 40;

bool others_can_write(const struct stat& info) { return (info.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

// "log folder /x" or, for a component above it, "log folder /x/y: /x".
std::string subject(std::string_view what, const std::string& path, const std::string& component) {
  return component == path ? fmt::format("{} {}", what, path) : fmt::format("{} {}: {}", what, path, component);
}

Unexpected refuse(const std::string& who, const std::string& why) {
  return fail(ExitCode::usage, fmt::format("{} {}; refusing", who, why));
}

// Why the folder `info` (the last component when `last`) is not safe to
// write in; "" when it is.
std::string unsafe_folder(const struct stat& info, bool last) {
  const uid_t me = ::geteuid();
  if (!S_ISDIR(info.st_mode)) {
    return "is not a folder";
  }
  if (last && info.st_uid != me) {
    return fmt::format("is owned by {}, not by you ({})", describe_owner(info.st_uid), describe_owner(me));
  }
  if (!last && info.st_uid != me && info.st_uid != 0) {
    return fmt::format("is owned by {}, not by you or root", describe_owner(info.st_uid));
  }
  const bool sticky = (info.st_mode & S_ISVTX) != 0;
  if (others_can_write(info) && (last || !sticky)) {
    return fmt::format("(owned by {}) can be written by others (mode {:04o})", describe_owner(info.st_uid),
                       info.st_mode & 07777);
  }
  return "";
}

// Why the file `info` is not one of the user's own that no one else could
// have prepared (`writing`: nor another name of a file, a hard link); "" when it is.
std::string unsafe_file(const struct stat& info, bool writing) {
  const uid_t me = ::geteuid();
  if (!S_ISREG(info.st_mode)) {
    return "is not a regular file";
  }
  if (info.st_uid != me) {
    return fmt::format("is owned by {}, not by you ({})", describe_owner(info.st_uid), describe_owner(me));
  }
  if (others_can_write(info)) {
    return fmt::format("can be written by others (mode {:04o})", info.st_mode & 07777);
  }
  if (writing && info.st_nlink > 1) {
    return fmt::format("has {} hard links", info.st_nlink);
  }
  return "";
}

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path.front() == '/') {
    return path;
  }
  std::vector<char> cwd(PATH_MAX);
  return ::getcwd(cwd.data(), cwd.size()) != nullptr ? std::string(cwd.data()) + "/" + path : path;
}

// lstat of `at`, made first as a folder when it is missing and `create`.
Result<struct stat> look_at(const std::string& at, const std::string& who, bool create) {
  struct stat info {};
  if (::lstat(at.c_str(), &info) == 0) {
    return info;
  }
  if (errno == ENOENT && create && (::mkdir(at.c_str(), 0755) == 0 || errno == EEXIST) &&
      ::lstat(at.c_str(), &info) == 0) {
    return info;
  }
  return fail(ExitCode::launch, fmt::format("{}: {}", who, std::strerror(errno)));
}

} // namespace

Result<std::string> own_folder(const std::string& path, std::string_view what, bool create) {
  std::deque<std::string> todo = components(absolute(path));
  std::string at;  // resolved so far; "" is /
  int links = 0;
  while (!todo.empty()) {
    const std::string name = todo.front();
    todo.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      at = at.substr(0, at.empty() ? 0 : at.rfind('/'));
      continue;
    }
    const std::string next = at + "/" + name;
    const std::string who = subject(what, path, todo.empty() ? path : next);
    auto info = look_at(next, who, create);
    if (!info) return fail(info.error());
    if (S_ISLNK(info->st_mode)) {
      if (info->st_uid != ::geteuid() && info->st_uid != 0) {
        return refuse(who, "is a symbolic link owned by " + describe_owner(info->st_uid));
      }
      std::vector<char> target(PATH_MAX + 1);
      const ssize_t size = ::readlink(next.c_str(), target.data(), PATH_MAX);
      if (size <= 0 || ++links > k_max_links) {
        return fail(ExitCode::launch, fmt::format("{}: {}", who, std::strerror(size <= 0 ? errno : ELOOP)));
      }
      const std::string link(target.data(), static_cast<std::size_t>(size));
      if (link.front() == '/') at.clear();
      auto parts = components(link);
      todo.insert(todo.begin(), parts.begin(), parts.end());
      continue;
    }
    if (std::string why = unsafe_folder(*info, todo.empty()); !why.empty()) {
      return refuse(who, why);
    }
    at = next;
  }
  return at.empty() ? std::string("/") : at;
}

Result<int> open_own_file(const std::string& path, int flags, std::string_view what, mode_t mode) {
  const std::string who = fmt::format("{} {}", what, path);
  // O_TRUNC only once the file is known to be ours; O_NONBLOCK: a FIFO there must not hang the open.
  int fd = ::open(path.c_str(), (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
  struct stat info {};
  if (fd < 0) {
    const int saved = errno;
    if ((saved == ELOOP || saved == EEXIST) && ::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
      return refuse(who, "is a symbolic link owned by " + describe_owner(info.st_uid));
    }
    errno = saved;
    return fail(ExitCode::launch, fmt::format("cannot open {}: {}", path, std::strerror(saved)));
  }
  const std::string why =
      ::fstat(fd, &info) != 0 ? std::strerror(errno) : unsafe_file(info, (flags & O_ACCMODE) != O_RDONLY);
  if (!why.empty()) {
    ::close(fd);
    return refuse(who, why);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if ((flags & O_TRUNC) != 0 && ::ftruncate(fd, 0) != 0) {
    const int saved = errno;
    ::close(fd);
    return fail(ExitCode::launch, fmt::format("cannot truncate {}: {}", path, std::strerror(saved)));
  }
  return fd;
}

Result<std::string> read_own_file(const std::string& path, std::string_view what, std::size_t max_bytes) {
  auto fd = open_own_file(path, O_RDONLY, what);
  if (!fd) return fail(fd.error());
  std::string text;
  char chunk[65536];
  while (text.size() <= max_bytes) {
    const ssize_t got = ::read(*fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int saved = errno;
      ::close(*fd);
      if (got < 0) return fail(ExitCode::launch, fmt::format("cannot read {}: {}", path, std::strerror(saved)));
      return text;
    }
    text.append(chunk, static_cast<std::size_t>(got));
  }
  ::close(*fd);
  return fail(ExitCode::usage, fmt::format("{} {} is larger than {} bytes", what, path, max_bytes));
}

Result<int> open_named_file(const std::string& path, bool exclusive, std::string_view what) {
  const std::string who = fmt::format("{} {}", what, path);
  const int write = O_WRONLY | O_CLOEXEC;
  struct stat info {};
  int fd = -1;
  if (::lstat(path.c_str(), &info) != 0 && errno == ENOENT) {
    fd = ::open(path.c_str(), write | O_CREAT | O_EXCL, 0644);
  } else if (exclusive) {
    errno = EEXIST;
  } else if (S_ISLNK(info.st_mode) && info.st_uid != ::geteuid() && info.st_uid != 0) {
    return refuse(who, "is a symbolic link owned by " + describe_owner(info.st_uid));
  } else {
    fd = ::open(path.c_str(), write | O_TRUNC | (S_ISLNK(info.st_mode) ? 0 : O_NOFOLLOW));
  }
  if (fd < 0) {
    const int saved = errno;
    if (saved == EEXIST) return fail(ExitCode::usage, fmt::format("{} already exists", who));
    return fail(ExitCode::usage, fmt::format("cannot write {}: {}", who, std::strerror(saved)));
  }
  return fd;
}

void remove_foreign_files(const std::string& folder, std::string_view suffix) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    struct stat info {};
    const std::string path = entry.path().string();
    if (::lstat(path.c_str(), &info) == 0 && !unsafe_file(info, true).empty()) {
      ::unlink(path.c_str());
    }
  }
}

} // namespace ddl
