// SPDX-License-Identifier: MIT
#include "src/launch/rank_signals.hpp"

#include <cstdint>
#include <utility>

#include <sys/eventfd.h>
#include <unistd.h>

namespace ddl {

RankSignalQueue::RankSignalQueue() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

RankSignalQueue::~RankSignalQueue() { ::close(fd_); }

void RankSignalQueue::push(int signo) {
  std::lock_guard lock(mutex_);
  pending_.push_back(signo);
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t ignored = ::write(fd_, &one, sizeof one);
}

std::vector<int> RankSignalQueue::take() {
  std::uint64_t drained = 0;
  [[maybe_unused]] ssize_t ignored = ::read(fd_, &drained, sizeof drained);
  std::lock_guard lock(mutex_);
  return std::exchange(pending_, {});
}

} // namespace ddl
