// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

namespace ddl {

// Longest line kept whole (64 KiB); a longer line is emitted in pieces of
// this size, each but the last marked partial. Bounds memory per stream.
inline constexpr std::size_t k_max_line_bytes = std::size_t{64} << 10;

// How a piece of output ends.
enum class LineEnd {
  newline,   // a whole line (its '\n' removed), or the stream's last bytes
  partial,   // cut at the cap: the line goes on in the next piece
  carriage,  // ends at a '\r' (a progress bar's update; split only when asked)
};

// Turns a byte stream into whole lines (without their '\n'). Bytes are kept
// as they are: '\r' and invalid UTF-8 pass through. With `split_carriage`,
// a '\r' not followed by '\n' also ends a piece (LineEnd::carriage, the '\r'
// removed), so that a progress bar's updates pass through at once.
class LineAssembler {
public:
  using LineFn = std::function<void(std::string_view line, LineEnd end)>;

  explicit LineAssembler(std::size_t max_line = k_max_line_bytes, bool split_carriage = false)
      : max_line_(max_line), split_carriage_(split_carriage) {}

  // Calls `emit` for every line that `bytes` completes.
  void feed(std::string_view bytes, const LineFn& emit);
  // Emits the final partial line, if any (the stream has ended).
  void finish(const LineFn& emit);
  std::size_t pending() const { return partial_.size(); }

private:
  // Where the next piece ends in `bytes`: its length and how; npos when
  // `bytes` does not complete a piece.
  std::size_t piece_end(std::string_view bytes, LineEnd& end) const;

  std::size_t max_line_;
  bool split_carriage_;
  bool held_carriage_ = false;  // the last chunk ended in '\r': '\n' next?
  std::string partial_;
};

// The last `capacity` lines of a stream, each cut to `max_width` bytes; for
// the failure summary.
class LineTail {
public:
  explicit LineTail(std::size_t capacity = 10, std::size_t max_width = 1000)
      : capacity_(capacity), max_width_(max_width) {}
  void add(std::string_view line);
  const std::deque<std::string>& lines() const { return lines_; }
  void clear() { lines_.clear(); }

private:
  std::size_t capacity_;
  std::size_t max_width_;
  std::deque<std::string> lines_;
};

} // namespace ddl
