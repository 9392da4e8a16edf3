// SPDX-License-Identifier: MIT
#include "backends/local/spawn.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/util/env.hpp"
#include "src/util/file.hpp"
#include "src/util/process.hpp"
#include "src/util/stdin_source.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

std::string describe_failure(const RankLaunch& launch, const std::string& program, SpawnFailure report) {
  std::string where = fmt::format("rank {} on {}", launch.rank, launch.host.name);
  const char* why = std::strerror(report.error);
  switch (report.stage) {
  case SpawnStage::pipes:
    return fmt::format("rank {}: cannot create pipes: {} (too many open files? raise ulimit -n)",
                       launch.rank, why);
  case SpawnStage::fork:
    return fmt::format("rank {}: cannot fork: {}", launch.rank, why);
  case SpawnStage::chdir:
    return fmt::format("{}: cannot change to directory {}: {}", where, launch.workdir, why);
  case SpawnStage::exec:
    return fmt::format("{}: cannot execute {}: {}", where, program, why);
  case SpawnStage::setup:
    break;
  }
  return fmt::format("{}: cannot set up the process: {}", where, why);
}

} // namespace

Result<std::string> resolve_program(const RankLaunch& launch) {
  if (launch.argv.empty() || launch.argv[0].empty()) {
    return fail(ExitCode::usage, "no command to run");
  }
  const std::string& word = launch.argv[0];
  if (word.find('/') != std::string::npos) {
    if (word[0] == '/' || launch.workdir.empty()) {
      return word;
    }
    return launch.workdir + "/" + word;
  }
  std::string path = env_value(launch.env, "PATH");
  if (path.empty()) {
    const char* own = std::getenv("PATH");
    path = own != nullptr ? own : "/usr/local/bin:/usr/bin:/bin";
  }
  if (auto found = find_on_path(word, path)) {
    return *found;
  }
  return fail(ExitCode::launch,
              fmt::format("rank {} on {}: command not found: {}", launch.rank, launch.host.name, word));
}

Result<SpawnedRank> spawn_rank(const RankLaunch& launch, const std::string& program, rlim_t nofile_soft) {
  SpawnSpec spec;
  spec.argv = launch.argv;
  spec.program = program;
  spec.workdir = launch.workdir;
  spec.group = ProcessGroup::new_session;
  spec.death_signal = SIGKILL;
  spec.nofile_soft = nofile_soft;
  spec.cpus = launch.cpus;
  // With nothing to read (fd 0 closed or /dev/null), the rank gets /dev/null itself, not a pipe.
  spec.stdin_pipe = launch.reads_stdin && !stdin_holds_nothing();
  for (const auto& [name, value] : launch.env) {
    spec.env.push_back(name + "=" + value);
  }
  auto started = spawn_process(spec);
  if (!started) {
    return fail(ExitCode::launch, describe_failure(launch, program, started.failure));
  }
  ::fcntl(started.child.out_fd, F_SETFL, O_NONBLOCK);
  ::fcntl(started.child.err_fd, F_SETFL, O_NONBLOCK);
  return SpawnedRank{started.child.pid, started.child.out_fd, started.child.err_fd, started.child.in_fd};
}

} // namespace ddl
