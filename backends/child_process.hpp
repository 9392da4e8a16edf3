// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/util/process.hpp"
#include "src/util/error.hpp"
#include "src/job/job.hpp"

namespace ddl {

// A helper program (kubectl, mpirun) started with pipes on 0, 1 and 2: the
// backends' edge of the runner in src/util/process.hpp.
using Spawned = ChildProcess;

struct SpawnOptions {
  EnvList set_env;               // added to (or replacing in) the inherited environment
  bool new_process_group = false;
  int death_signal = 0;          // sent to it when the spawning thread ends (0: none)
  bool ignore_sigpipe = false;   // it outlives our pipes (e.g. mpirun cleaning up)
};

// Starts argv[0] (searched in PATH). A program that cannot be executed is an
// error naming it (ExitCode::launch). Every fd but 0, 1, 2 is closed in it.
Result<Spawned> spawn_piped(const std::vector<std::string>& argv, const SpawnOptions& options);

// How a finished child ended, from its wait status.
RankExit exit_of_status(int wait_status);

// Reads the child's stdout and stderr until both close, handing each chunk to
// `sink`, then reaps it. With `deadline_ms`, kills it (SIGKILL) when it runs
// longer and sets `timed_out`. With `stopped`, it ends with ddl's phase
// (pump_output). Closes the out/err fds (and in_fd if open).
int pump_and_wait(Spawned& child, const std::function<void(Stream, std::string_view)>& sink,
                  std::optional<long> deadline_ms = std::nullopt, bool* timed_out = nullptr,
                  bool* stopped = nullptr);


} // namespace ddl
