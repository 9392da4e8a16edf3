// SPDX-License-Identifier: MIT
#pragma once

// ddl's stdin for the ranks that read it (--stdin, RankLaunch::reads_stdin),
// as mpirun and srun forward theirs: one thread reads fd 0 and hands every
// chunk to each attached sink, in order; at EOF every sink is closed, and a
// sink attached after EOF is closed at once. A sink whose write fails (its
// rank is gone) is dropped. The thread starts at start_stdin(), once the
// gang's ranks are attached (so that --stdin all gives every rank the same
// bytes); a rank attached later (a restart) reads from where the others are.
// When ddl's stdin is a terminal of which ddl is not in the foreground (ddl
// run ... &), it is not read (a read would stop ddl with SIGTTIN): every sink
// gets EOF.

#include <functional>
#include <string_view>

namespace ddl {

struct StdinSink {
  std::function<bool(std::string_view)> write;  // false: the rank is gone
  std::function<void()> close;                  // EOF for the rank
};

// Attaches rank `rank`'s sink, replacing (and closing) the rank's earlier one.
void attach_stdin(int rank, StdinSink sink);

// Starts reading ddl's stdin when a sink is attached (the supervisor, after
// the gang's start). Idempotent.
void start_stdin();

// Forgets rank `rank`'s sink without closing it, once no write to it is under
// way: a backend whose sinks reach into it calls this before it shuts down.
void detach_stdin(int rank);

// A sink that writes to `fd` (a pipe to the rank, blocking), which it owns.
StdinSink fd_stdin_sink(int fd);

} // namespace ddl
