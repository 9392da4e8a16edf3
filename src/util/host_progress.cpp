// SPDX-License-Identifier: MIT
#include "src/util/host_progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/util/signals.hpp"

namespace ddl {

namespace {

constexpr auto k_show_after = std::chrono::milliseconds(500);
constexpr auto k_redraw_every = std::chrono::milliseconds(200);

bool not_quiet_on_terminal() {
  // -v logs per host instead; -q (errors only) shows nothing.
  return ::isatty(STDERR_FILENO) == 1 && spdlog::get_level() == spdlog::level::warn;
}

bool verbose() { return spdlog::get_level() <= spdlog::level::info; }

void write_stderr(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

} // namespace

HostProgress::HostProgress(std::string done_verb, std::vector<std::string> hosts)
    : verb_(std::move(done_verb)), hosts_(std::move(hosts)), on_terminal_(not_quiet_on_terminal()),
      per_host_log_(!on_terminal_ && verbose()), begun_(hosts_.size()) {
  if (on_terminal_ && hosts_.size() > 1) {
    redraw_ = thread_without_signals([this] { redraw_loop(); });
  }
}

HostProgress::~HostProgress() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  wake_.notify_all();
  if (redraw_.joinable()) {
    redraw_.join();
  }
  if (drawn_) {
    write_stderr("\r\033[K");
  }
}

void HostProgress::begin(std::size_t i) {
  std::lock_guard lock(mutex_);
  if (i < begun_.size()) {
    begun_[i] = Clock::now();
  }
}

void HostProgress::end(std::size_t i, std::string_view failed) {
  std::optional<Clock::time_point> begun;
  std::size_t done = 0;
  {
    std::lock_guard lock(mutex_);
    if (i >= begun_.size()) {
      return;
    }
    begun = begun_[i];
    begun_[i].reset();
    done = ++done_;
  }
  if (per_host_log_) {
    double seconds = begun ? std::chrono::duration<double>(Clock::now() - *begun).count() : 0.0;
    if (failed.empty()) {
      spdlog::info("{} {} ({}/{}) in {:.1f}s", verb_, hosts_[i], done, hosts_.size(), seconds);
    } else {
      spdlog::info("not {} {} ({}/{}) after {:.1f}s: {}", verb_, hosts_[i], done, hosts_.size(), seconds, failed);
    }
  }
}

std::string HostProgress::text() const {
  std::lock_guard lock(mutex_);
  return text_locked(Clock::now());
}

std::string HostProgress::text_locked(Clock::time_point now) const {
  std::string line = fmt::format("ddl: {} {}/{}", verb_, done_, hosts_.size());
  std::optional<std::size_t> slowest;
  for (std::size_t i = 0; i < begun_.size(); ++i) {
    if (begun_[i] && (!slowest || *begun_[i] < *begun_[*slowest])) {
      slowest = i;
    }
  }
  if (slowest) {
    line += fmt::format(", slowest {} ({:.1f}s)", hosts_[*slowest],
                        std::chrono::duration<double>(now - *begun_[*slowest]).count());
  }
  return line;
}

void HostProgress::redraw_loop() {
  std::unique_lock lock(mutex_);
  while (!finished_) {
    wake_.wait_for(lock, k_redraw_every, [this] { return finished_; });
    const auto now = Clock::now();
    if (finished_ || now - start_ < k_show_after) {
      continue;
    }
    write_stderr("\r\033[K" + text_locked(now));
    drawn_ = true;
  }
}

} // namespace ddl
