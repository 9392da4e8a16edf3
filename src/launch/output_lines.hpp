// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

namespace ddl {

// Longest line kept whole; a line longer than this is emitted in pieces of
// this size (each piece a line of its own). Bounds memory per stream.
inline constexpr std::size_t k_max_line_bytes = std::size_t{256} << 20;

// Turns a byte stream into whole lines (without their '\n'). Bytes are kept
// as they are: '\r' and invalid UTF-8 pass through.
class LineAssembler {
public:
  using LineFn = std::function<void(std::string_view line)>;

  explicit LineAssembler(std::size_t max_line = k_max_line_bytes) : max_line_(max_line) {}

  // Calls `emit` for every line that `bytes` completes.
  void feed(std::string_view bytes, const LineFn& emit);
  // Emits the final partial line, if any (the stream has ended).
  void finish(const LineFn& emit);
  std::size_t pending() const { return partial_.size(); }

private:
  std::size_t max_line_;
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
