// SPDX-License-Identifier: MIT
#include "backends/child_process.hpp"

#include <csignal>
#include <cstring>

#include <unistd.h>

#include <fmt/core.h>

#include "src/util/signals.hpp"

namespace ddl {

Result<Spawned> spawn_piped(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) {
    return fail(ExitCode::launch, "empty command");
  }
  std::vector<std::string> set_env;
  for (const auto& [name, value] : options.set_env) {
    set_env.push_back(name + "=" + value);
  }
  SpawnSpec spec;
  spec.argv = argv;
  spec.env = environment_with(set_env);
  spec.stdin_pipe = true;
  spec.group = options.new_process_group ? ProcessGroup::new_group : ProcessGroup::inherit;
  spec.death_signal = options.death_signal;
  spec.ignore_sigpipe = options.ignore_sigpipe;
  auto started = spawn_process(spec);
  if (!started) {
    const int error = started.failure.error;
    if (started.failure.stage == SpawnStage::pipes) {
      return fail(ExitCode::launch, fmt::format("pipe: {}", std::strerror(error)));
    }
    return fail(ExitCode::launch, fmt::format("cannot run {}: {}", argv[0], std::strerror(error)));
  }
  return started.child;
}

RankExit exit_of_status(int wait_status) {
  ProcessExit how = process_exit(wait_status);
  return RankExit{how.code, how.signal, ""};
}

int pump_and_wait(Spawned& child, const std::function<void(Stream, std::string_view)>& sink,
                  std::optional<long> deadline_ms, bool* timed_out, bool* stopped) {
  auto to_stream = [&](OutputStream stream, std::string_view bytes) {
    sink(stream == OutputStream::out ? Stream::out : Stream::err, bytes);
  };
  return pump_output(child, to_stream, deadline_ms, timed_out, stopped);
}

} // namespace ddl
