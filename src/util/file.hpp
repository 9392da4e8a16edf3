// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "src/util/error.hpp"

namespace ddl {

// A whole input file read with a cap, as data arrives: /dev/zero, a huge file
// or an endless pipe stop at `max_bytes` + 1 instead of filling memory, and a
// FIFO nobody writes to reads as empty instead of blocking.
struct CappedRead {
  enum class Status { ok, cannot_open, directory, too_large, read_error };
  Status status = Status::ok;
  int error = 0;     // errno for cannot_open and read_error
  std::string text;  // the contents when ok
};

CappedRead read_capped(const std::string& path, std::size_t max_bytes);

// A new private (0700) directory $TMPDIR/PREFIX.XXXXXX (/tmp when TMPDIR is
// unset); "" when it cannot be made (errno says why).
std::string make_private_dir(std::string_view prefix);

// `text` written to DIR/`name` (mode 0600) in a new private directory DIR
// (make_private_dir(prefix), returned in `dir_out` for the caller to remove);
// the file's path, or an error (ExitCode::launch) naming what failed.
Result<std::string> write_private_file(std::string_view prefix, const std::string& name, const std::string& text,
                                       std::string& dir_out);

// Writes all of the buffers with one writev (repeated on partial writes).
// False on error (errno is kept: EPIPE when the reader went away).
bool write_fully(int fd, std::string_view a, std::string_view b = {}, std::string_view c = {});

// The first executable regular file named `program` in the ':'-separated
// `path` (an empty entry is "."), or nullopt.
std::optional<std::string> find_on_path(std::string_view program, std::string_view path);

} // namespace ddl
