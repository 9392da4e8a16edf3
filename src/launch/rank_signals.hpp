// SPDX-License-Identifier: MIT
#pragma once

#include <mutex>
#include <vector>

namespace ddl {

// Signals asked for the ranks from another thread (`ddl signal JOB USR1`
// through the live-job socket). The supervisor polls fd() and forwards each
// one to every running rank through Attempt::signal_running, the path a
// signal to ddl takes. Thread-safe.
class RankSignalQueue {
public:
  RankSignalQueue();
  ~RankSignalQueue();
  RankSignalQueue(const RankSignalQueue&) = delete;
  RankSignalQueue& operator=(const RankSignalQueue&) = delete;

  void push(int signo);
  // The signals pushed since the last call, in order.
  std::vector<int> take();
  // Readable while signals wait (an eventfd).
  int fd() const { return fd_; }

private:
  int fd_ = -1;
  std::mutex mutex_;
  std::vector<int> pending_;
};

} // namespace ddl
