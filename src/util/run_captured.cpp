// SPDX-License-Identifier: MIT
#include "src/util/run_captured.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fmt/core.h>
#include <sys/wait.h>

#include "src/util/lifeline.hpp"
#include "src/util/process.hpp"
#include "src/util/process_set.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

// The helper's output, each stream capped at `max` (one read beyond it
// shows that it was passed).
class Collected final : public ChildEvents {
public:
  Collected(Captured& result, std::size_t max) : result_(result), max_(max) {}
  void output(OutputStream stream, std::string_view bytes) override {
    std::string& sink = stream == OutputStream::out ? result_.out : result_.err;
    if (sink.size() <= max_) {
      sink.append(bytes);
    }
    result_.too_much_output = result_.out.size() > max_;
  }
  void ended(int wait_status) override {
    result_.status = wait_status;
    done = true;
  }
  bool done = false;

private:
  Captured& result_;
  std::size_t max_;
};

// Collects stdout and stderr until the child exits (what its pipes hold
// then is read), or the deadline, too much output or a stop; its process
// group (anything it left behind) is killed and it is reaped.
void supervise(ChildProcess& child, Millis timeout, const CaptureOptions& options, Captured& result) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Collected collected(result, options.max_output);
  ProcessSet set;
  set.add(child, collected, {.kill_group_at_exit = true, .drain_after_exit = Millis{0}});
  if (!options.part_of_stop) {
    set.watch_fd(stop::fd());
  }
  bool killed = false;
  while (!collected.done) {
    if (!killed) {
      result.stopped = !options.part_of_stop && stop::requested();
      result.timed_out = !result.stopped && !result.too_much_output && std::chrono::steady_clock::now() >= deadline;
    }
    if (!killed && (result.stopped || result.too_much_output || result.timed_out)) {
      ::kill(-child.pid, SIGKILL);
      set.close_pipes(child.pid);
      killed = true;
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    const int wait = static_cast<int>(std::clamp<long long>(left, 0, 50));
    set.run_once(options.part_of_stop ? wait : stop::wait_ms(wait));
  }
}

} // namespace

Result<Captured> run_captured(const std::vector<std::string>& argv, Millis timeout, CaptureOptions options) {
  SpawnSpec spec;
  spec.argv = argv;
  spec.env = environment_with({});
  spec.group = ProcessGroup::new_group;
  spec.death_signal = SIGKILL;
  // Kills the group (what the script started too) should ddl die first.
  Lifeline lifeline;
  if (auto watching = lifeline.start(); !watching) {
    return fail(watching.error());
  }
  auto started = spawn_process(spec);
  if (!started) {
    const char* why = std::strerror(started.failure.error);
    switch (started.failure.stage) {
    case SpawnStage::pipes:
      return fail(ExitCode::launch, fmt::format("cannot create a pipe: {}", why));
    case SpawnStage::fork:
      return fail(ExitCode::launch, fmt::format("cannot start {}: {}", argv[0], why));
    default:
      return fail(ExitCode::launch, fmt::format("cannot run {}: {}", argv[0], why));
    }
  }
  lifeline.watch(started.child.pid);
  Captured result;
  supervise(started.child, timeout, options, result);
  lifeline.forget(started.child.pid);
  return result;
}

bool Captured::succeeded() const {
  return !timed_out && !too_much_output && !stopped && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {}", WTERMSIG(status));
  }
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

} // namespace ddl
