// SPDX-License-Identifier: MIT
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>

#include "src/util/process.hpp"
#include "src/util/process_set.hpp"
#include "src/util/signals.hpp"

namespace ddl {

void kill_child_tree(pid_t pid) {
  if (pid <= 0) {
    return;
  }
  if (::getpgid(pid) == pid) {
    ::kill(-pid, SIGKILL);
  } else {
    ::kill(pid, SIGKILL);
  }
}

namespace {

// pump_output's child: its bytes to the sink, its status when it has ended.
class Pumped final : public ChildEvents {
public:
  explicit Pumped(const std::function<void(OutputStream, std::string_view)>& sink) : sink_(sink) {}
  void output(OutputStream stream, std::string_view bytes) override { sink_(stream, bytes); }
  void ended(int wait_status) override {
    status = wait_status;
    done = true;
  }
  int status = 0;
  bool done = false;

private:
  const std::function<void(OutputStream, std::string_view)>& sink_;
};

} // namespace

int pump_output(ChildProcess& child,
                const std::function<void(OutputStream, std::string_view)>& sink,
                std::optional<long> deadline_ms, bool* timed_out, bool* stopped) {
  const auto start = std::chrono::steady_clock::now();
  constexpr int k_stop_poll_ms = 200;
  Pumped pumped(sink);
  ProcessSet set;
  set.add(child, pumped);
  if (stopped != nullptr) {
    set.watch_fd(stop::fd());
  }
  bool killed = false;
  while (!pumped.done) {
    int wait_ms = stopped != nullptr ? stop::wait_ms(k_stop_poll_ms) : -1;
    if (!killed && stopped != nullptr && stop::requested()) {
      kill_child_tree(child.pid);
      *stopped = true;
      killed = true;
    }
    if (!killed && deadline_ms) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      if (elapsed.count() >= *deadline_ms) {
        ::kill(child.pid, SIGKILL);
        if (timed_out != nullptr) {
          *timed_out = true;
        }
        killed = true;
      } else {
        int left = static_cast<int>(*deadline_ms - elapsed.count());
        wait_ms = wait_ms < 0 ? left : std::min(wait_ms, left);
      }
    }
    if (killed) {
      set.close_pipes(child.pid);  // what it left behind may hold them
      wait_ms = wait_ms < 0 ? k_stop_poll_ms : std::min(wait_ms, k_stop_poll_ms);
    }
    set.run_once(wait_ms);
  }
  close_fd(child.in_fd);
  return pumped.status;
}

} // namespace ddl
