// SPDX-License-Identifier: MIT
#pragma once

// The client side of the live-job sockets (src/launch/live_server.hpp):
// finding this user's running jobs, asking one of them. Nothing here waits
// on a job for long: a job whose ddl is stopped (Ctrl-Z) or busy is "not
// answering" once k_answer_budget has passed.

#include <chrono>
#include <string>
#include <vector>

#include "src/util/error.hpp"
#include "src/util/json.hpp"

namespace ddl {

// How long a command waits for jobs to answer: for all of them together
// (ps), or for one to take a request and give its first answer.
inline constexpr std::chrono::seconds k_answer_budget{3};

struct LiveJob {
  std::string socket;     // its path
  Json info;              // what "info" answered (id, name, ranks, hosts, state, ...)
  bool answered = true;   // false: info holds only id, pid and state "not answering" or "stopped"
  bool stopped = false;   // its ddl is stopped (state T): listed at once, never waited for
  std::string refused;    // why it would not answer: another live protocol version (names both)
  std::string id() const { return info.value("id", ""); }
  std::string name() const { return info.value("name", ""); }
};

// Every running ddl job of this user on this machine, oldest first, all
// asked at once within k_answer_budget. Sockets nobody listens on any more
// (a ddl killed with -9) are removed; a job that does not answer in time is
// listed as such (answered false).
Result<std::vector<LiveJob>> running_jobs();

// The answering job that `word` names: its id, else its name. A job that did
// not answer (its id, or maybe its name): ExitCode::launch, "did not
// answer". None, or a name that several jobs have: ExitCode::usage, listing them.
Result<LiveJob> find_job(const std::string& word);

// A connection to one job: a request sent, its answer read line by line.
class LiveConnection {
public:
  // Connects within k_answer_budget (else ExitCode::launch, "did not
  // answer"); `bounded` also gives the first answer line that long.
  static Result<LiveConnection> open(const LiveJob& job, const std::string& request, bool bounded);
  LiveConnection(LiveConnection&& other) noexcept;
  LiveConnection& operator=(LiveConnection&&) = delete;
  LiveConnection(const LiveConnection&) = delete;
  ~LiveConnection();
  // The next answer line, without its '\n'; false once the job closed it
  // (or, for the first line of a bounded request, did not answer in time).
  bool next_line(std::string& line);

private:
  LiveConnection(int fd, bool bounded) : fd_(fd), bounded_(bounded) {}
  int fd_ = -1;
  bool bounded_ = false;
  std::string buffer_;
};

// "job NAME (ID) did not answer within 3s (its ddl is stopped, or busy)".
std::string did_not_answer(const LiveJob& job);

} // namespace ddl
