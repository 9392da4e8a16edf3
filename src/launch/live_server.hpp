// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/launch/output_lines.hpp"
#include "src/launch/rank_signals.hpp"

namespace ddl {

// What `ddl ps` shows of a running job (never a secret: no env, no token).
struct LiveJobInfo {
  std::string name;
  int ranks = 0;
  std::vector<std::string> hosts;
  std::string backend;
  std::string log_dir;  // "" when none
};

// A running job's control socket (DESIGN.md "Next capabilities": ddl ps,
// logs, stop, signal): RUNTIME_DIR/PID.sock (runtime_dir()), served by one
// thread of its own with poll (never a thread per client), at most
// k_max_followers `logs -f` followers and, apart from them, k_max_requests
// other clients at once (so that followers never lock out ps, stop or
// signal), each with a bounded buffer, so that no client can block or grow
// the supervisor. Only this user's processes are answered
// (the folder is 0700, the socket 0600, and each peer's SO_PEERCRED uid is
// checked). It keeps the last lines of each rank (a bounded ring) for
// `ddl logs`, and follows new ones.
//
// Requests, one line each, after "ddl-live VERSION " (live_protocol.hpp: a
// request of another version is answered "X ..." naming both); answers are
// lines too:
//   info              -> one JSON object (LiveJobInfo, id, pid, state, attempt, started, age_s)
//   logs RANK FOLLOW  -> "L RANK o|e n|p|c TEXT" per line (RANK -1: all),
//                        "N note"; with FOLLOW 1 new lines until "E CODE" (the job ended),
//                        or "X ..." when k_max_followers follow already
//   stop              -> "O ..." then "E CODE" when the job has ended (SIGINT to ddl)
//   signal N          -> "O ..." or "X why"
class LiveServer {
public:
  static constexpr int k_max_followers = 32;
  static constexpr int k_max_requests = 32;

  // Listens in the runtime folder; an error (the folder is unsafe) means the
  // job runs without a control socket.
  static Result<std::unique_ptr<LiveServer>> start(LiveJobInfo info);
  ~LiveServer();  // ends the thread, closes every client, removes the socket
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  // The socket's path; its stem is the job's id.
  const std::string& path() const;
  // Every rank line as ddl has it (redacted): the Output's tap. Cheap: the
  // server's thread sends it to followers within 50 ms.
  void line(int rank, Stream stream, std::string_view text, LineEnd end);
  // "running"/"stopping" and the attempt (SupervisorOptions::on_state).
  void set_state(std::string_view state, int attempt);
  // The job's exit code: followers and `ddl stop` get "E CODE"; the job is
  // "ended" from here on.
  void finished(int exit_code);
  // Signals that `ddl signal` asks for the ranks (SupervisorOptions::rank_signals).
  RankSignalQueue& rank_signals();

  struct State;

private:
  explicit LiveServer(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

// "USR1", "SIGUSR1", "usr1" or "10" as a signal number; 0 when none.
int parse_signal(std::string_view text);

} // namespace ddl
