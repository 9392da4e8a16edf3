// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "src/util/rank_tag.hpp"

namespace ddl::pmix {

// Copies a rank's output pipe to one of our streams in whole lines, so that
// ranks sharing our stdout never interleave mid-line. With a `rank` (3), its
// tag "[3] " goes before each line, and every write ends a line, so that another rank's
// line never joins one of this rank: a line longer than 32 KiB goes out in
// pieces "[3+] piece\n" (the line goes on in the next piece of rank 3; ddl
// joins them in rank 3's log), and the rank's last bytes get a '\n'.
// Without a rank, bytes pass as they are, a line longer than 64 KiB in
// pieces.
class LineRelay {
public:
  LineRelay(int from_fd, int to_fd, std::optional<int> rank = std::nullopt)
      : m_from(from_fd), m_to(to_fd), m_prefix(rank ? rank_tag::tag(*rank) : ""),
        m_continued_prefix(rank ? rank_tag::continued(*rank) : "") {}
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
  // Takes bytes read elsewhere (a relay made with from_fd -1, its pipe read
  // by a ProcessSet) and writes out every whole line.
  void feed(std::string_view bytes);
  // Writes out what is held and closes the pipe.
  void finish();

private:
  void write_lines(std::size_t count);
  void write_piece();
  void write_all(std::string_view bytes);
  int m_from;
  int m_to;
  std::string m_prefix;
  std::string m_continued_prefix;
  std::string m_pending;
};

} // namespace ddl::pmix
