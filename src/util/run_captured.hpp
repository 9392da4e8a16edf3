// SPDX-License-Identifier: MIT
#pragma once
// A short helper program run to completion with its output captured: the
// discovery script, nvidia-smi, scontrol, kubectl get, squeue, mpirun
// --version.

#include <string>
#include <vector>

#include "src/util/duration.hpp"
#include "src/util/error.hpp"

namespace ddl {

inline constexpr std::size_t k_max_output = 4u << 20;

struct CaptureOptions {
  std::size_t max_output = k_max_output;  // stdout beyond it: killed, too_much_output
  bool part_of_stop = false;  // runs on through a stop (scancel forwarding Ctrl-C)
};

struct Captured {
  int status = 0;          // as from waitpid
  bool timed_out = false;
  bool too_much_output = false;  // stdout went past max_output
  bool stopped = false;          // stop::requested(): ddl is ending
  std::string out;
  std::string err;
  // Ran to its end and exited 0.
  bool succeeded() const;
};

// Runs `argv` in its own process group (killed whole when it ends, at
// `timeout`, on stop::requested() unless part_of_stop, or when ddl dies),
// our environment, stdin /dev/null. Errors: it cannot be started
// (ExitCode::launch).
Result<Captured> run_captured(const std::vector<std::string>& argv, Millis timeout, CaptureOptions options = {});

// "exited with status N" or "was killed by signal N".
std::string exit_text(int status);

} // namespace ddl
