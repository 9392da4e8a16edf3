// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace ddl::pmix {

// Copies a rank's output pipe to one of our streams in whole lines, so that
// ranks sharing our stdout never interleave mid-line. A line longer than
// 64 KiB goes out in pieces rather than being held.
class LineRelay {
public:
  LineRelay(int from_fd, int to_fd) : m_from(from_fd), m_to(to_fd) {}
  ~LineRelay();
  LineRelay(LineRelay&& other) noexcept;
  LineRelay& operator=(LineRelay&&) = delete;
  LineRelay(const LineRelay&) = delete;
  LineRelay& operator=(const LineRelay&) = delete;

  // -1 once the pipe reached its end.
  int fd() const { return m_from; }
  // Reads what the pipe holds (call when poll says so) and writes out every
  // whole line; at the pipe's end also the rest, and closes it.
  void pump();
  // Writes out what is held and closes the pipe.
  void finish();

private:
  void write_out(std::size_t count);
  int m_from;
  int m_to;
  std::string m_pending;
};

} // namespace ddl::pmix
