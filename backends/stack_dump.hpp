// SPDX-License-Identifier: MIT
#pragma once

// The watchdog's stack dumper (issue 30): one POSIX sh script, run on a
// stalled rank's host, by the local backend directly and by the shim (ssh,
// Kubernetes). `sh -c SCRIPT sh PID TOOL SECONDS` prints the stacks of the
// rank PID (or a line saying why there are none) on its stdout:
//   py-spy  `py-spy dump` of the rank's Python process;
//   gdb     `gdb -batch -ex "thread apply all bt"` (and py-bt where Python's
//           gdb extension is installed), ptrace refused reported as such;
//   auto    py-spy for a Python rank where installed; else gdb (for a Python
//           rank only with the Python extension); else for a Python rank its
//           faulthandler: SIGABRT, which dumps every thread's Python stack
//           when the rank runs with PYTHONFAULTHANDLER=1 (ddl sets it).
// Each tool runs under `timeout --foreground -s KILL SECONDS` where that
// exists. When PID is (or has a child that is) `ddl worker pmix-host`
// (--mpi pmix), the stacks are those of each of the worker's MPI ranks,
// each under a line "ddl: MPI rank R (pid P) on HOST:". With a fourth word,
// `sh -c SCRIPT sh RANK TOOL SECONDS RENDEZVOUS` (ranks under a launcher,
// mpirun), the rank is found by number: the program that the launcher's rank
// script runs for DDL_RANK=RANK with DDL_RENDEZVOUS=RENDEZVOUS, of the user
// the script runs as. The script holds no
// single quote (the shim embeds it).

#include <string>
#include <string_view>

#include "src/job/job.hpp"

namespace ddl {

std::string_view stack_dump_script();

// The shim's control line: "dump TOOL SECONDS\n".
std::string stack_dump_line(DumpTool tool, Millis timeout);

// Whole seconds, at least 1: the dumper's bound.
long dump_seconds(Millis timeout);

} // namespace ddl
