// SPDX-License-Identifier: MIT
#include "src/launch/output_lines.hpp"

namespace ddl {

std::size_t LineAssembler::piece_end(std::string_view bytes, LineEnd& end) const {
  std::size_t at = split_carriage_ ? bytes.find_first_of("\r\n") : bytes.find('\n');
  // A '\r' ends a piece only when a byte other than '\n' follows it.
  while (at != std::string_view::npos && bytes[at] == '\r') {
    if (at + 1 == bytes.size()) return std::string_view::npos;  // wait for the next byte
    if (bytes[at + 1] != '\n') {
      end = LineEnd::carriage;
      return at;
    }
    at = bytes.find_first_of("\r\n", at + 1);
  }
  end = LineEnd::newline;
  return at;
}

void LineAssembler::feed(std::string_view bytes, const LineFn& emit) {
  if (bytes.empty()) return;
  if (held_carriage_) {
    // The '\r' that ended the last chunk: a piece of its own unless '\n' follows.
    held_carriage_ = false;
    if (!bytes.empty() && bytes.front() != '\n') {
      emit(partial_, LineEnd::carriage);
      partial_.clear();
    } else {
      partial_.push_back('\r');
    }
  }
  while (!bytes.empty()) {
    LineEnd end = LineEnd::newline;
    std::size_t stop = piece_end(bytes, end);
    std::size_t room = max_line_ - partial_.size();
    if (stop == std::string_view::npos || stop > room) {
      bool ends_in_carriage = split_carriage_ && bytes.back() == '\r' && stop == std::string_view::npos;
      std::size_t keep = bytes.size() - (ends_in_carriage ? 1 : 0);
      if (keep <= room) {
        partial_.append(bytes.substr(0, keep));
        held_carriage_ = ends_in_carriage;
        return;
      }
      // The line would exceed the cap: emit a full piece, marked partial.
      partial_.append(bytes.substr(0, room));
      bytes.remove_prefix(room);
      emit(partial_, LineEnd::partial);
      partial_.clear();
      continue;
    }
    if (partial_.empty()) {
      emit(bytes.substr(0, stop), end);  // the common case: no copy
    } else {
      partial_.append(bytes.substr(0, stop));
      emit(partial_, end);
      partial_.clear();
    }
    bytes.remove_prefix(stop + 1);
  }
}

void LineAssembler::finish(const LineFn& emit) {
  if (held_carriage_) {
    held_carriage_ = false;
    emit(partial_, LineEnd::carriage);
    partial_.clear();
  }
  if (!partial_.empty()) {
    emit(partial_, LineEnd::newline);
    partial_.clear();
    partial_.shrink_to_fit();
  }
}

void LineTail::add(std::string_view line) {
  if (capacity_ == 0) {
    return;
  }
  if (lines_.size() == capacity_) {
    lines_.pop_front();
  }
  lines_.emplace_back(line.substr(0, max_width_));
}

} // namespace ddl
