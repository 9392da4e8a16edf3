// SPDX-License-Identifier: MIT
#include "src/pmix/host_events.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>

#include "src/util/process.hpp"

namespace ddl::pmix {

HostEventBox::HostEventBox() {
  std::array<int, 2> fds{-1, -1};
  if (::pipe2(fds.data(), O_CLOEXEC | O_NONBLOCK) == 0) {
    m_read_fd = fds[0];
    m_write_fd = fds[1];
  }
}

HostEventBox::~HostEventBox() {
  close_fd(m_read_fd);
  close_fd(m_write_fd);
}

void HostEventBox::push(HostEvent event) {
  std::lock_guard lock(m_mutex);
  m_events.push_back(std::move(event));
  char byte = 1;
  // A full pipe already says "look": the byte may be dropped.
  [[maybe_unused]] ssize_t ignored = ::write(m_write_fd, &byte, 1);
}

std::vector<HostEvent> HostEventBox::take() {
  std::lock_guard lock(m_mutex);
  std::array<char, 256> sink{};
  while (::read(m_read_fd, sink.data(), sink.size()) > 0) {
  }
  std::vector<HostEvent> events;
  events.swap(m_events);
  return events;
}

} // namespace ddl::pmix
