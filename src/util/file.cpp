// SPDX-License-Identifier: MIT
#include "src/util/file.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include <array>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "src/util/text.hpp"

namespace ddl {

namespace {

// Reads everything `fd` gives, up to `max_bytes` + 1 bytes.
CappedRead read_all(int fd, std::size_t max_bytes) {
  CappedRead out;
  char buffer[65536];
  while (out.text.size() <= max_bytes) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0 && errno == EAGAIN) {  // a pipe whose writer has more to say
      pollfd wait{fd, POLLIN, 0};
      ::poll(&wait, 1, -1);
      continue;
    }
    if (got < 0) {
      return {CappedRead::Status::read_error, errno, {}};
    }
    if (got == 0) {
      break;
    }
    out.text.append(buffer, static_cast<std::size_t>(got));
  }
  if (out.text.size() > max_bytes) {
    return {CappedRead::Status::too_large, 0, {}};
  }
  return out;
}

} // namespace

CappedRead read_capped(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer returns at once (and reads EOF).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return {CappedRead::Status::cannot_open, errno, {}};
  }
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return {CappedRead::Status::directory, 0, {}};
  }
  CappedRead result = read_all(fd, max_bytes);
  ::close(fd);
  return result;
}

} // namespace ddl

namespace ddl {

std::string make_private_dir(std::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" +
                      std::string(prefix) + ".XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    return {};
  }
  return templ;
}

Result<std::string> write_private_file(std::string_view prefix, const std::string& name, const std::string& text,
                                       std::string& dir_out) {
  dir_out = make_private_dir(prefix);
  if (dir_out.empty()) {
    return fail(ExitCode::launch, "cannot create a private directory " + std::string(prefix) + ".XXXXXX");
  }
  std::string path = dir_out + "/" + name;
  std::ofstream out(path, std::ios::trunc);
  ::chmod(path.c_str(), 0600);
  out << text;
  out.close();
  if (!out) {
    return fail(ExitCode::launch, "cannot write " + path);
  }
  return path;
}

std::optional<std::string> find_on_path(std::string_view program, std::string_view path) {
  for (const auto& dir : split(path, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + std::string(program);
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

bool write_fully(int fd, std::string_view a, std::string_view b, std::string_view c) {
  std::array<std::string_view, 3> parts{a, b, c};
  std::size_t first = 0;
  while (true) {
    std::array<iovec, 3> iov{};
    int count = 0;
    for (std::size_t i = first; i < parts.size(); ++i) {
      if (!parts[i].empty()) {
        iov[static_cast<std::size_t>(count)].iov_base = const_cast<char*>(parts[i].data());
        iov[static_cast<std::size_t>(count)].iov_len = parts[i].size();
        ++count;
      }
    }
    if (count == 0) {
      return true;
    }
    ssize_t written = ::writev(fd, iov.data(), count);
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN) {  // someone made our stdout non-blocking
        pollfd wait{fd, POLLOUT, 0};
        ::poll(&wait, 1, 100);
        continue;
      }
      return false;
    }
    auto left = static_cast<std::size_t>(written);
    for (std::size_t i = first; i < parts.size(); ++i) {
      std::size_t take = std::min(left, parts[i].size());
      parts[i].remove_prefix(take);
      left -= take;
      if (parts[i].empty()) {
        first = i + 1;
      } else {
        break;
      }
    }
  }
}

} // namespace ddl
