// SPDX-License-Identifier: MIT
#pragma once

// The folders and files ddl writes in for the user (--log-dir, a sweep's
// folder, its trial folders, the session broker's folder): they must be the
// user's own. Root running `ddl sweep --dir /tmp/shared/x` must never write,
// chmod or read a request through a symbolic link or a folder that another
// user prepared (issue 40). The one place for that check.

#include <cstddef>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "src/util/error.hpp"

namespace ddl {

// Checks (and with `create` makes, mkdir -p, mode 0755 at most) the folder
// `path`, walking it one component at a time as the kernel would: every
// symbolic link on the way must be the user's or root's; every folder above
// must be the user's or root's, and writable by no one else unless sticky
// (/tmp); the folder itself must be a real folder of the user's own that no
// one else can write. Its resolved absolute path, or an error naming the
// path and its owner: ExitCode::usage for a refusal ("log folder /x is owned
// by uid 1001 (alice), not by you (uid 0); refusing"), ExitCode::launch when
// the system says no (a missing folder without `create`, EACCES). `what`
// names the folder: "sweep folder", "log folder".
Result<std::string> own_folder(const std::string& path, std::string_view what, bool create);

// Opens `path`, a file in a folder that own_folder checked, with `flags`
// (O_CLOEXEC and O_NOFOLLOW added; `mode` when it creates it). A file that
// is already there must be a regular file of the user's own that no one
// else can write: a symbolic link or another user's file is refused
// (ExitCode::usage), naming its owner. The open file descriptor.
Result<int> open_own_file(const std::string& path, int flags, std::string_view what, mode_t mode = 0644);

// The whole of `path`, opened as open_own_file(O_RDONLY) does; refused
// (ExitCode::usage) when it holds more than `max_bytes`.
Result<std::string> read_own_file(const std::string& path, std::string_view what, std::size_t max_bytes);

// Opens `path`, a file the user named on the command line (ddl init FILE,
// bench --output_file) for writing, as a shell's `>` would, but never
// through another user's link: a symbolic link there must be the user's or
// root's (/dev/stdout is), else it is refused (ExitCode::usage) naming its
// owner, as the kernel's protected_symlinks does in sticky folders. A path
// that is not there is created with O_EXCL (a link planted after the look
// is not followed); with `exclusive` an existing one is refused ("already
// exists"). The open file descriptor.
Result<int> open_named_file(const std::string& path, bool exclusive, std::string_view what);

// Removes the entries of `folder` whose names end with `suffix` that are
// not regular files of the user's own with one link (a link or another
// user's file planted while the folder was not yet safe): files that ddl
// hands out to ranks by name, such as torch's error files.
void remove_foreign_files(const std::string& folder, std::string_view suffix);

// "uid 1001 (alice)", or "uid 1001" when the user has no name.
std::string describe_owner(uid_t uid);

} // namespace ddl
