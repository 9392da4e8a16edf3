// SPDX-License-Identifier: MIT
#include "src/launch/output_lines.hpp"

namespace ddl {

void LineAssembler::feed(std::string_view bytes, const LineFn& emit) {
  while (!bytes.empty()) {
    std::size_t newline = bytes.find('\n');
    std::size_t room = max_line_ - partial_.size();
    if (newline == std::string_view::npos || newline > room) {
      if (bytes.size() < room) {
        partial_.append(bytes);
        return;
      }
      // The line would exceed the cap: emit a full piece and go on.
      partial_.append(bytes.substr(0, room));
      bytes.remove_prefix(room);
      emit(partial_);
      partial_.clear();
      continue;
    }
    if (partial_.empty()) {
      emit(bytes.substr(0, newline));  // the common case: no copy
    } else {
      partial_.append(bytes.substr(0, newline));
      emit(partial_);
      partial_.clear();
    }
    bytes.remove_prefix(newline + 1);
  }
}

void LineAssembler::finish(const LineFn& emit) {
  if (!partial_.empty()) {
    emit(partial_);
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
