// SPDX-License-Identifier: MIT
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace ddl::pmix {

// What the PMIx server's thread (and the fence exchange's) tells the host's
// supervising loop.
struct HostEvent {
  enum class Kind { connected, finalized, aborted, failed };
  Kind kind = Kind::failed;
  int rank = 0;
  int status = 0;  // aborted: the rank's status; failed: the exit code
  std::string message;
};

// A thread-safe queue of HostEvents with a pipe that turns readable when one
// arrives, for the loop's poll set.
class HostEventBox {
public:
  HostEventBox();  // the pipe may fail to open: see fd()
  ~HostEventBox();
  HostEventBox(const HostEventBox&) = delete;
  HostEventBox& operator=(const HostEventBox&) = delete;

  // -1 when the pipe could not be made.
  int fd() const { return m_read_fd; }
  void push(HostEvent event);
  // Every event pushed so far, in order; empties the pipe.
  std::vector<HostEvent> take();

private:
  std::mutex m_mutex;
  std::vector<HostEvent> m_events;
  int m_read_fd = -1;
  int m_write_fd = -1;
};

} // namespace ddl::pmix
