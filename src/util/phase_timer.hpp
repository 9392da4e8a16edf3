// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <string>

namespace ddl {

// Times one phase of a launch (read job, hosts, plan, connect, preflight,
// start, run, stop, shut down), as mold times its passes: under -v (log
// level info) each phase says on stderr what it took when it ends,
//   ddl: info: phase preflight: 312.4ms
// so that users see where a launch spends its time. Silent otherwise.
class PhaseTimer {
public:
  explicit PhaseTimer(std::string name);
  ~PhaseTimer() { end(); }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

  // Ends the phase now (once; later calls and the destructor do nothing).
  void end();

private:
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  bool ended_ = false;
};

// A phase's time as the timer prints it: "0.8ms", "312.4ms", "2.50s".
std::string phase_time_text(std::chrono::steady_clock::duration took);

} // namespace ddl
