// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace ddl::pmix {

// Copies a rank's output pipe to one of our streams in whole lines, so that
// ranks sharing our stdout never interleave mid-line. A line longer than
// 64 KiB goes out in pieces rather than being held. A `prefix` ("[3] ")
// goes before each line (once per line, also when it goes out in pieces).
class LineRelay {
public:
  LineRelay(int from_fd, int to_fd, std::string prefix = {})
      : m_from(from_fd), m_to(to_fd), m_prefix(std::move(prefix)) {}
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
  void write_all(std::string_view bytes);
  int m_from;
  int m_to;
  std::string m_prefix;
  bool m_line_start = true;
  std::string m_pending;
};

} // namespace ddl::pmix
