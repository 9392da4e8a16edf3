// SPDX-License-Identifier: MIT
// The discovery script and the local GPU count: short-lived child processes
// (src/util/run_captured.hpp), bounded in time; on timeout, Ctrl-C, SIGTERM or the
// job's deadline the child's whole process group is killed, and so it is when
// ddl dies, even by SIGKILL (PR_SET_PDEATHSIG and a lifeline watcher).
#include <dirent.h>
#include <fmt/core.h>
#include <sys/wait.h>

#include "src/inventory/inventory.hpp"
#include "src/util/run_captured.hpp"
#include "src/util/duration.hpp"
#include "src/util/log.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {


namespace {

int count_proc_gpus() {
  DIR* dir = ::opendir("/proc/driver/nvidia/gpus");
  if (dir == nullptr) {
    return 0;
  }
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') {
      ++count;
    }
  }
  ::closedir(dir);
  return count;
}

} // namespace

Result<Inventory> script_inventory(const std::string& script, Millis timeout, int default_slots) {
  auto run = run_captured({script}, timeout);
  if (!run) {
    return fail(ExitCode::launch, "discovery script: " + run.error().message);
  }
  if (run->stopped) {
    return fail(stop::error(fmt::format("running the discovery script {}", script)));
  }
  if (run->timed_out) {
    return fail(ExitCode::launch,
                fmt::format("discovery script {} did not finish within {}; it was killed", script,
                            format_duration(timeout)));
  }
  if (run->too_much_output) {
    return fail(ExitCode::usage, fmt::format("discovery script {} printed more than {} bytes; it was "
                                             "killed (ddl reads at most that much)",
                                             script, k_max_output));
  }
  if (!WIFEXITED(run->status) || WEXITSTATUS(run->status) != 0) {
    std::string stderr_tail = last_lines(run->err, 10);
    return fail(ExitCode::launch,
                fmt::format("discovery script {} {}{}{}", script, exit_text(run->status),
                            stderr_tail.empty() ? "" : ":\n", stderr_tail));
  }
  if (trim(run->out).empty()) {
    return fail(ExitCode::launch, fmt::format("discovery script {} printed no hosts", script));
  }
  auto specs = parse_hostfile(run->out, script + " (output)");
  if (!specs) {
    return fail(specs.error());
  }
  Inventory inventory;
  for (const auto& spec : *specs) {
    inventory.push_back(Host{spec.name, spec.name, spec.slots.value_or(default_slots), {}, "script", spec.user, spec.port, spec.labels});
  }
  return inventory;
}

int local_gpu_count() {
  constexpr Millis k_probe_timeout{10'000};
  auto run = run_captured({"nvidia-smi", "-L"}, k_probe_timeout);
  if (run && run->timed_out) {  // the launch waited for it: say why
    print_warning(fmt::format("localhost: nvidia-smi -L did not answer within {} (a hung GPU driver?); it was "
                              "killed, and the GPUs are counted from /proc/driver/nvidia/gpus",
                              format_duration(k_probe_timeout)));
  }
  if (run && !run->timed_out && WIFEXITED(run->status) && WEXITSTATUS(run->status) == 0) {
    int count = 0;
    for (const auto& line : split(run->out, '\n')) {
      count += line.starts_with("GPU ") ? 1 : 0;
    }
    return count;
  }
  return count_proc_gpus();
}

} // namespace ddl
