// SPDX-License-Identifier: MIT
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

// This executable's absolute path (/proc/self/exe), or "ddl" when unknown:
// what ddl starts again as a worker, shim or rsh agent.
std::string own_executable_path();

// The one fork/exec runner: ranks, helper programs (kubectl, mpirun) and the
// discovery script all start through spawn_process.
enum class ProcessGroup { inherit, new_group, new_session };

struct SpawnSpec {
  std::vector<std::string> argv;
  std::string program;                 // executed as is; "": argv[0] searched in PATH
  std::vector<std::string> env;        // "NAME=value", exactly (see environment_with)
  std::string workdir;                 // "": ours
  bool stdin_pipe = false;             // else stdin is /dev/null
  ProcessGroup group = ProcessGroup::inherit;
  int death_signal = 0;                // sent when the forking thread ends (0: none)
  bool ignore_sigpipe = false;         // it outlives our pipes (e.g. mpirun cleaning up)
  std::optional<rlim_t> nofile_soft;   // lowers its RLIMIT_NOFILE soft limit
  std::vector<int> cpus;               // pinned to these CPUs before exec; empty: as we are
};

// A started child; the pipe ends are ours, CLOEXEC, -1 when absent.
struct ChildProcess {
  pid_t pid = -1;
  int in_fd = -1;   // write end of its stdin; closing it is its EOF
  int out_fd = -1;
  int err_fd = -1;
};

// Where starting failed and its errno, for the caller to word.
enum class SpawnStage { pipes, fork, setup, chdir, exec };
struct SpawnFailure {
  SpawnStage stage = SpawnStage::setup;
  int error = 0;
};

struct SpawnResult {
  ChildProcess child;
  SpawnFailure failure;  // meaningful when !*this
  explicit operator bool() const { return child.pid > 0; }
};

// Forks and executes `spec`: default signal actions and an empty signal mask,
// only fds 0-2 survive exec. Returns once the program runs or failed to (a
// failed child is reaped). With `death_signal`, call it from a thread that
// lives as long as the child.
SpawnResult spawn_process(const SpawnSpec& spec);

// Our environment with `set` ("NAME=value") added or replacing.
std::vector<std::string> environment_with(const std::vector<std::string>& set);
// `base` ("NAME=value") with `set` added or replacing.
std::vector<std::string> environment_with(const std::vector<std::string>& base,
                                          const std::vector<std::string>& set);

// How a child ended: exit code, or 128 + signal when killed by `signal`.
struct ProcessExit {
  int code = 0;
  int signal = 0;
};
ProcessExit process_exit(int wait_status);

// Reads the child's stdout and stderr until both close, handing each chunk to
// `sink`, then reaps it and returns its wait status. With `deadline_ms`, kills
// it (SIGKILL) when it runs longer and sets `timed_out`. With `stopped`, a
// helper that ends with ddl's phase: once stop::requested() (Ctrl-C, SIGTERM,
// the job's deadline) it is killed (its process group when it leads one) and
// `stopped` is set. Closes its fds.
enum class OutputStream { out, err };
int pump_output(ChildProcess& child,
                const std::function<void(OutputStream, std::string_view)>& sink,
                std::optional<long> deadline_ms = std::nullopt, bool* timed_out = nullptr,
                bool* stopped = nullptr);

// SIGKILL to the child's process group when it leads one, else to it alone.
void kill_child_tree(pid_t pid);

// Closes `fd` if open and sets it to -1.
void close_fd(int& fd);

} // namespace ddl
