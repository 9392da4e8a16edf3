// SPDX-License-Identifier: MIT
#pragma once

// The client side of the live-job sockets (src/launch/live_server.hpp):
// finding this user's running jobs, asking one of them.

#include <string>
#include <vector>

#include "src/util/error.hpp"
#include "src/util/json.hpp"

namespace ddl::cmd {

struct LiveJob {
  std::string socket;  // its path
  Json info;           // what "info" answered (id, name, ranks, hosts, state, ...)
  std::string id() const { return info.value("id", ""); }
  std::string name() const { return info.value("name", ""); }
};

// Every running ddl job of this user on this machine, oldest first. Sockets
// nobody listens on any more (a ddl killed with -9) are removed; a job that
// does not answer within 3 s is left out with a warning.
Result<std::vector<LiveJob>> running_jobs();

// The job that `word` names: its id, else its name. None, or a name that
// several jobs have: an error (ExitCode::usage) that lists them.
Result<LiveJob> find_job(const std::string& word);

// A connection to one job: a request sent, its answer read line by line.
class LiveConnection {
public:
  static Result<LiveConnection> open(const LiveJob& job, const std::string& request);
  LiveConnection(LiveConnection&& other) noexcept;
  LiveConnection& operator=(LiveConnection&&) = delete;
  LiveConnection(const LiveConnection&) = delete;
  ~LiveConnection();
  // The next answer line, without its '\n'; false once the job closed it.
  bool next_line(std::string& line);

private:
  explicit LiveConnection(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffer_;
};

} // namespace ddl::cmd
