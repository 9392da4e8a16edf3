// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>

#include <sys/types.h>

#include "src/util/error.hpp"

namespace ddl {

// The per-user folder where running ddl jobs keep their control sockets
// (`ddl ps`, `logs`, `stop`, `signal`): $XDG_RUNTIME_DIR/ddl when
// XDG_RUNTIME_DIR is set, else /tmp/ddl-UID. Made with mode 0700 when
// missing (`create`); refused (ExitCode::launch) when it is not a real
// folder (a symbolic link, a file), is owned by someone else, or lets group
// or others in.
Result<std::string> runtime_dir(bool create);
// Where that folder is, unchecked.
std::string runtime_dir_path();

// A unix stream socket listening at `path` (a stale one there is replaced),
// mode 0600, non-blocking, close-on-exec.
Result<int> listen_unix(const std::string& path);
// One attempt to connect to `path` that never blocks: the connected socket
// (blocking, close-on-exec), or nullopt when the listener's backlog is full
// (its process is stopped or busy: try again later). Refused
// (ExitCode::launch) when it cannot connect (errno kept: ECONNREFUSED,
// ENOENT: nobody listens there) or the process that listens is not this
// user (SO_PEERCRED).
Result<std::optional<int>> try_connect_unix(const std::string& path);
// The user id of the process at the other end of unix socket `fd`.
std::optional<uid_t> peer_uid(int fd);

} // namespace ddl
