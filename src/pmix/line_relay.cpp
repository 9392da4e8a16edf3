// SPDX-License-Identifier: MIT
#include "src/pmix/line_relay.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include "src/util/process.hpp"

namespace ddl::pmix {

namespace {
constexpr std::size_t k_max_line = 64 * 1024;
}

LineRelay::LineRelay(LineRelay&& other) noexcept
    : m_from(std::exchange(other.m_from, -1)), m_to(other.m_to), m_prefix(std::move(other.m_prefix)),
      m_line_start(other.m_line_start), m_pending(std::move(other.m_pending)) {}

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

void LineRelay::write_out(std::size_t count) {
  if (m_prefix.empty()) {
    write_all(std::string_view(m_pending).substr(0, count));
  } else {
    std::string out;
    for (std::size_t at = 0; at < count;) {
      if (m_line_start) {
        out += m_prefix;
      }
      std::size_t end = m_pending.find('\n', at);
      std::size_t stop = end == std::string::npos || end >= count ? count : end + 1;
      out.append(m_pending, at, stop - at);
      m_line_start = stop > at && m_pending[stop - 1] == '\n';
      at = stop;
    }
    write_all(out);
  }
  m_pending.erase(0, count);
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
  m_pending.append(buffer.data(), static_cast<std::size_t>(got));
  std::size_t end = m_pending.rfind('\n');
  if (end != std::string::npos) {
    write_out(end + 1);
  } else if (m_pending.size() >= k_max_line) {
    write_out(m_pending.size());
  }
}

void LineRelay::finish() {
  if (!m_pending.empty()) {
    write_out(m_pending.size());
  }
  close_fd(m_from);
}

} // namespace ddl::pmix
