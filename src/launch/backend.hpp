// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/plan/plan.hpp"
#include "src/render/launches.hpp"
#include "src/util/error.hpp"

namespace ddl {

enum class Stream { out, err };

// How a rank ended. `launch_error` non-empty: it never ran (exit 3 class).
struct RankExit {
  int code = 0;       // exit status when it exited
  int signal = 0;     // signal number when it was killed (code is then 128+signal)
  std::string launch_error;
};

// Where a backend reports what its ranks do. Called from any thread; the
// implementation is thread-safe.
class RankEvents {
public:
  virtual ~RankEvents() = default;
  virtual void started(int rank, long pid) = 0;
  // Raw bytes as they arrive (not lines); the supervisor assembles lines.
  virtual void output(int rank, Stream stream, std::string_view bytes) = 0;
  // Exactly once per started rank, after its last output.
  virtual void exited(int rank, const RankExit& how) = 0;
};

// One way to start a gang (local, ssh, kubernetes, mpirun).
class Backend {
public:
  virtual ~Backend() = default;
  // Reaches every host before any rank starts; reports every unreachable host,
  // auth failure or key mismatch at once (ExitCode::launch).
  virtual Result<void> prepare(const Plan& plan) = 0;
  // Starts one rank; its output and end arrive through `events`.
  virtual Result<void> start(const RankLaunch& launch, RankEvents& events) = 0;
  // Sends `signo` to the rank's whole process group, wherever it runs.
  virtual void signal(int rank, int signo) = 0;
  // Ends whatever still runs (KILL) and releases connections. Idempotent.
  virtual void shutdown() = 0;
};

} // namespace ddl
