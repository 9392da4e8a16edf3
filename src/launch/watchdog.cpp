// SPDX-License-Identifier: MIT
#include "src/launch/watchdog.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "src/util/duration.hpp"
#include "src/util/rank_list.hpp"
#include "src/util/signal_names.hpp"

namespace ddl {

namespace {

WatchClock::rep now_rep() { return WatchClock::now().time_since_epoch().count(); }

std::string plural(std::size_t count, std::string_view word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

} // namespace

ProgressBoard::ProgressBoard(int world_size, const WatchdogSection& watchdog)
    : source_(watchdog.progress), ranks_(static_cast<std::size_t>(std::max(world_size, 0))) {
  if (source_ == ProgressSource::regex) {
    if (auto compiled = Pattern::compile(watchdog.progress_regex)) {  // checked when the job was loaded
      pattern_.emplace(std::move(*compiled));
    }
  }
  begin_attempt();
}

void ProgressBoard::begin_attempt() {
  collecting_ = false;
  evidence_at_ = 0;
  const auto now = now_rep();
  for (Rank& rank : ranks_) {
    rank.progress = now;
    std::lock_guard lock(rank.mutex);
    rank.last_line.clear();
    rank.evidence.clear();
  }
}

ProgressBoard::Rank* ProgressBoard::at(int rank) {
  return rank >= 0 && static_cast<std::size_t>(rank) < ranks_.size() ? &ranks_[static_cast<std::size_t>(rank)]
                                                                      : nullptr;
}

const ProgressBoard::Rank* ProgressBoard::at(int rank) const {
  return const_cast<ProgressBoard*>(this)->at(rank);
}

void ProgressBoard::progress(int rank) {
  if (Rank* entry = at(rank)) {
    entry->progress = now_rep();
  }
}

void ProgressBoard::line(int rank, std::string_view text) {
  Rank* entry = at(rank);
  if (entry == nullptr) {
    return;
  }
  {
    std::lock_guard lock(entry->mutex);
    if (!collecting_) {  // the last line before the dump, not the dump's
      entry->last_line.assign(text.substr(0, 1000));
    } else {
      if (entry->evidence.size() == k_max_evidence_lines) {
        entry->evidence.pop_front();
      }
      entry->evidence.emplace_back(text.substr(0, 1000));
      evidence_at_ = now_rep();
    }
  }
  if (pattern_ && pattern_->found_in(text.substr(0, k_progress_match_bytes))) {
    progress(rank);
  }
}

void ProgressBoard::bytes(int rank) {
  if (source_ == ProgressSource::any_line) {
    progress(rank);
  }
}

void ProgressBoard::heartbeat(int rank) { progress(rank); }

void ProgressBoard::touch_all() {
  const auto now = now_rep();
  for (Rank& rank : ranks_) {
    rank.progress = now;
  }
}

void ProgressBoard::start_evidence() { collecting_ = true; }

WatchClock::time_point ProgressBoard::last_progress(int rank) const {
  const Rank* entry = at(rank);
  return WatchClock::time_point(WatchClock::duration(entry != nullptr ? entry->progress.load() : 0));
}

std::string ProgressBoard::last_line(int rank) const {
  const Rank* entry = at(rank);
  if (entry == nullptr) {
    return {};
  }
  std::lock_guard lock(entry->mutex);
  return entry->last_line;
}

std::vector<std::string> ProgressBoard::evidence(int rank) const {
  const Rank* entry = at(rank);
  if (entry == nullptr) {
    return {};
  }
  std::lock_guard lock(entry->mutex);
  return {entry->evidence.begin(), entry->evidence.end()};
}

std::optional<WatchClock::time_point> ProgressBoard::last_evidence() const {
  WatchClock::rep at = evidence_at_.load();
  if (at == 0) {
    return std::nullopt;
  }
  return WatchClock::time_point(WatchClock::duration(at));
}

std::vector<bool> ProgressBoard::has_evidence() const {
  std::vector<bool> has(ranks_.size(), false);
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    std::lock_guard lock(ranks_[i].mutex);
    has[i] = !ranks_[i].evidence.empty();
  }
  return has;
}

std::optional<Hang> find_hang(const WatchdogSection& watchdog, const std::vector<WatchClock::time_point>& last,
                              const std::vector<bool>& running, WatchClock::time_point now) {
  std::optional<WatchClock::time_point> newest;
  std::optional<WatchClock::time_point> oldest;
  std::vector<int> alive;
  for (std::size_t rank = 0; rank < last.size() && rank < running.size(); ++rank) {
    if (running[rank]) {
      alive.push_back(static_cast<int>(rank));
      newest = newest ? std::max(*newest, last[rank]) : last[rank];
      oldest = oldest ? std::min(*oldest, last[rank]) : last[rank];
    }
  }
  if (alive.empty()) {
    return std::nullopt;
  }
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  if (watchdog.stall && now - *newest >= *watchdog.stall) {
    return Hang{false, alive, duration_cast<milliseconds>(now - *oldest)};
  }
  if (watchdog.straggler && alive.size() >= 2 && *newest - *oldest >= *watchdog.straggler) {
    Hang hang{true, {}, duration_cast<milliseconds>(now - *oldest)};
    for (int rank : alive) {
      if (*newest - last[static_cast<std::size_t>(rank)] >= *watchdog.straggler) {
        hang.ranks.push_back(rank);
      }
    }
    return hang;
  }
  return std::nullopt;
}

std::string hang_announcement(const WatchdogSection& watchdog, const Hang& hang, std::string_view dump_how) {
  std::string what =
      hang.straggler
          ? fmt::format("rank{} {} made no progress for {} while others did (watchdog.straggler = {})",
                        hang.ranks.size() == 1 ? "" : "s", compress_ranks(hang.ranks), format_duration(hang.silent),
                        format_duration(*watchdog.straggler))
          : fmt::format("no rank made progress for {} (watchdog.stall = {})", format_duration(hang.silent),
                        format_duration(*watchdog.stall));
  return fmt::format("ddl: watchdog: {}; asking every rank for its stacks ({}) for up to {}, then ending the "
                     "attempt (exit 5)\n",
                     what, dump_how, format_duration(watchdog.dump_timeout));
}

std::string hang_report(const Hang& hang, const ProgressBoard& board,
                        const std::vector<RankLaunch>& launches, const std::vector<std::string>& notes) {
  std::string text = fmt::format("ddl: error: {} {}: {}\n", hang.straggler ? "straggling" : "stalled",
                                 hang.ranks.size() == 1 ? "rank" : "ranks", compress_ranks(hang.ranks));
  for (int rank : hang.ranks) {
    const auto index = static_cast<std::size_t>(rank);
    std::string host = index < launches.size() ? launches[index].host.name : "?";
    std::string last = board.last_line(rank);
    text += fmt::format("ddl: rank {} on {}: last line: {}\n", rank, host, last.empty() ? "(none)" : last);
  }
  for (const std::string& note : notes) {
    text += "ddl: " + note + "\n";
  }
  for (int rank = 0; rank < board.world_size(); ++rank) {
    auto lines = board.evidence(rank);
    if (lines.empty()) {
      continue;
    }
    text += fmt::format("ddl: stack dump of rank {} ({}):\n", rank, plural(lines.size(), "line"));
    for (const std::string& line : lines) {
      text += fmt::format("  [{}] {}\n", rank, line);
    }
  }
  return text;
}

} // namespace ddl
