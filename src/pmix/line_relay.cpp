// SPDX-License-Identifier: MIT
#include "src/pmix/line_relay.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include "src/util/process.hpp"

namespace ddl::pmix {

namespace {
// Bytes held for one line before it goes out in pieces. Tagged pieces stay
// well under ddl's own 64 KiB line cap, so that ddl never cuts one again.
constexpr std::size_t k_max_line = 64 * 1024;
constexpr std::size_t k_max_piece = 32 * 1024;
} // namespace

LineRelay::LineRelay(LineRelay&& other) noexcept
    : m_from(std::exchange(other.m_from, -1)), m_to(other.m_to), m_prefix(std::move(other.m_prefix)),
      m_continued_prefix(std::move(other.m_continued_prefix)), m_pending(std::move(other.m_pending)) {}

LineRelay::~LineRelay() { finish(); }

void LineRelay::write_all(std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t wrote = ::write(m_to, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) {
      continue;
    }
    if (wrote <= 0) {
      break;  // our stream is gone: the output is dropped, the rank runs on
    }
    done += static_cast<std::size_t>(wrote);
  }
}

void LineRelay::write_lines(std::size_t count) {
  if (m_prefix.empty()) {
    write_all(std::string_view(m_pending).substr(0, count));
  } else {
    std::string out;
    for (std::size_t at = 0; at < count;) {
      std::size_t end = m_pending.find('\n', at);
      std::size_t stop = end == std::string::npos || end >= count ? count : end + 1;
      out += m_prefix;
      out.append(m_pending, at, stop - at);
      if (out.back() != '\n') {
        out += '\n';  // the rank's last bytes: ended here, so no other rank's line joins them
      }
      at = stop;
    }
    write_all(out);
  }
  m_pending.erase(0, count);
}

void LineRelay::write_piece() {
  if (m_prefix.empty()) {
    write_lines(m_pending.size());
    return;
  }
  std::string out = m_continued_prefix;
  out.append(m_pending, 0, k_max_piece);
  out += '\n';
  write_all(out);
  m_pending.erase(0, k_max_piece);
}

void LineRelay::pump() {
  if (m_from < 0) {
    return;
  }
  std::array<char, 16384> buffer{};
  ssize_t got = ::read(m_from, buffer.data(), buffer.size());
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
    return;
  }
  if (got <= 0) {
    finish();
    return;
  }
  feed(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
}

void LineRelay::feed(std::string_view bytes) {
  m_pending.append(bytes);
  std::size_t end = m_pending.rfind('\n');
  if (end != std::string::npos) {
    write_lines(end + 1);
  }
  while (m_pending.size() >= (m_prefix.empty() ? k_max_line : k_max_piece + 1)) {
    write_piece();
  }
}

void LineRelay::finish() {
  if (!m_pending.empty()) {
    write_lines(m_pending.size());
  }
  close_fd(m_from);
}

} // namespace ddl::pmix
