// SPDX-License-Identifier: MIT
#include "src/launch/watchdog.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "src/util/duration.hpp"
#include "src/util/rank_list.hpp"
#include "src/util/rank_tag.hpp"
#include "src/util/signal_names.hpp"

namespace ddl {

namespace {

WatchClock::rep now_rep() { return WatchClock::now().time_since_epoch().count(); }

// The first run of digits in `text`, when there is one that fits.
std::optional<long long> first_number(std::string_view text) {
  auto begin = std::ranges::find_if(text, [](char c) { return c >= '0' && c <= '9'; });
  long long value = 0;
  bool any = false;
  for (auto it = begin; it != text.end() && *it >= '0' && *it <= '9' && value < 1'000'000'000'000'000LL; ++it) {
    value = value * 10 + (*it - '0');
    any = true;
  }
  return any ? std::optional(value) : std::nullopt;
}

// R of the stack dumper's "ddl: MPI rank R (pid P) on HOST:", which starts
// the dump of MPI rank R among its host's (backends/stack_dump.hpp).
std::optional<int> dump_header_rank(std::string_view line) {
  constexpr std::string_view k_header = "ddl: MPI rank ";
  if (!line.starts_with(k_header)) {
    return std::nullopt;
  }
  line.remove_prefix(k_header.size());
  auto number = first_number(line);
  const bool digits_first = !line.empty() && line.front() >= '0' && line.front() <= '9';
  return digits_first && number && *number <= 1'000'000'000 && line.find(" (pid ") != std::string_view::npos
             ? std::optional(static_cast<int>(*number))
             : std::nullopt;
}

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

void ProgressBoard::watch_mpi_ranks(const std::vector<int>& host_ranks) {
  first_.clear();
  int first = 0;
  for (int count : host_ranks) {
    first_.push_back(first);
    first += std::max(count, 0);
  }
  if (first_.empty()) {
    return;
  }
  first_.push_back(first);
  std::vector<Rank> watched(static_cast<std::size_t>(first));
  ranks_.swap(watched);
  begin_attempt();
}

int ProgressBoard::gang_rank(int rank) const {
  if (first_.empty()) {
    return rank;
  }
  auto after = std::ranges::upper_bound(first_.begin(), first_.end() - 1, rank);
  return static_cast<int>(after - first_.begin()) - 1;
}

std::pair<int, std::string_view> ProgressBoard::route(int rank, std::string_view text) {
  const auto host = static_cast<std::size_t>(rank);
  if (first_.empty() || rank < 0 || host + 1 >= first_.size()) {
    return {first_.empty() ? rank : -1, text};
  }
  if (auto tag = rank_tag::parse(text); tag && tag->rank >= first_[host] && tag->rank < first_[host + 1]) {
    return {tag->rank, text.substr(tag->text_at)};
  }
  if (!collecting_) {
    return {first_[host], text};  // the worker's own words: its host's first rank's, as in the logs
  }
  // The dumper's lines (written past the worker, untagged): those after
  // "ddl: MPI rank R (pid P)" are R's.
  std::lock_guard lock(dump_mutex_);
  if (auto header = dump_header_rank(text); header && *header >= first_[host] && *header < first_[host + 1]) {
    dumping_[host] = *header;
  }
  return {dumping_[host] >= 0 ? dumping_[host] : first_[host], text};
}

void ProgressBoard::begin_attempt() {
  {
    std::lock_guard lock(dump_mutex_);
    dumping_.assign(first_.empty() ? 0 : first_.size() - 1, -1);
  }
  collecting_ = false;
  evidence_at_ = 0;
  const auto now = now_rep();
  for (Rank& rank : ranks_) {
    rank.progress = now;
    rank.step = -1;
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

void ProgressBoard::line(int gang, std::string_view tagged) {
  const auto [rank, text] = route(gang, tagged);
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
  if (!pattern_) {
    if (!first_.empty() && source_ == ProgressSource::any_line) {
      progress(rank);
    }
    return;
  }
  if (auto matched = pattern_->match_in(text.substr(0, k_progress_match_bytes))) {
    progress(rank);
    if (auto number = first_number(*matched)) {
      entry->step = *number;
    }
  }
}

void ProgressBoard::bytes(int rank) {
  if (source_ == ProgressSource::any_line && first_.empty()) {
    progress(rank);
  }
}

void ProgressBoard::heartbeat(int rank) {
  const auto host = static_cast<std::size_t>(rank);
  if (first_.empty()) {
    progress(rank);
  } else if (rank >= 0 && host + 1 < first_.size()) {
    for (int mpi_rank = first_[host]; mpi_rank < first_[host + 1]; ++mpi_rank) {
      progress(mpi_rank);
    }
  }
}

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

std::optional<long long> ProgressBoard::step(int rank) const {
  const Rank* entry = at(rank);
  long long value = entry != nullptr ? entry->step.load() : -1;
  return value >= 0 ? std::optional(value) : std::nullopt;
}

std::optional<WatchClock::time_point> ProgressBoard::last_evidence() const {
  WatchClock::rep at = evidence_at_.load();
  if (at == 0) {
    return std::nullopt;
  }
  return WatchClock::time_point(WatchClock::duration(at));
}

std::vector<bool> ProgressBoard::gang_has_evidence() const {
  std::vector<bool> has(first_.empty() ? ranks_.size() : first_.size() - 1, false);
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    std::lock_guard lock(ranks_[i].mutex);
    if (!ranks_[i].evidence.empty()) {
      has[static_cast<std::size_t>(gang_rank(static_cast<int>(i)))] = true;
    }
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

std::string dump_how(const WatchdogSection& watchdog) {
  if (watchdog.dump_signal != 0) {
    return signal_name(watchdog.dump_signal);
  }
  if (watchdog.dump_tool == DumpTool::automatic) {
    return "py-spy, gdb or Python's faulthandler";
  }
  return fmt::format("{} dump", dump_tool_name(watchdog.dump_tool));
}

std::string dump_signal_death(int rank, std::string_view host, int dump_signal) {
  const std::string name = signal_name(dump_signal);
  return fmt::format("rank {} on {}: killed by the dump signal {} (no handler for it); a Python program answers it "
                     "after `faulthandler.register(signal.{}, all_threads=True)`, or leave watchdog.dump out (auto)",
                     rank, host, name, name);
}

namespace {

std::string host_of(const std::vector<RankLaunch>& launches, const ProgressBoard& board, int rank) {
  const auto index = static_cast<std::size_t>(board.gang_rank(rank));
  return index < launches.size() ? launches[index].host.name : "?";
}

} // namespace

std::vector<StallGroup> stall_groups(const Hang& hang, const ProgressBoard& board,
                                     const std::vector<RankLaunch>& launches) {
  const auto size = static_cast<std::size_t>(board.world_size());
  std::vector<std::string> where(size);
  std::vector<std::string> own(size);  // each rank's own innermost frames, for a suspect
  std::vector<std::vector<std::string>> stacks(size);
  std::vector<std::optional<long long>> steps(size);
  std::vector<int> ranks;
  for (int rank : hang.ranks) {
    if (rank < 0 || static_cast<std::size_t>(rank) >= size) {
      continue;
    }
    const auto index = static_cast<std::size_t>(rank);
    ranks.push_back(rank);
    steps[index] = board.step(rank);
    const auto evidence = board.evidence(rank);
    auto frames = innermost_frames(evidence);
    std::string last = board.last_line(rank);
    own[index] = frames ? *frames : "last line: " + (last.empty() ? "(none)" : last);
    stacks[index] = native_stack(evidence);
  }
  const auto shared = native_places(ranks, stacks);
  for (int rank : ranks) {
    const auto index = static_cast<std::size_t>(rank);
    where[index] = stacks[index].empty() ? own[index] : shared[index];
  }
  auto groups = lagging_steps(ranks, steps);
  auto places = group_by_place(ranks, where);
  for (StallGroup& place : places) {
    if (place.suspect) {
      place.where = own[static_cast<std::size_t>(place.ranks.front())];
    }
  }
  groups.insert(groups.end(), places.begin(), places.end());
  for (StallGroup& group : groups) {
    if (group.suspect) {
      group.host = host_of(launches, board, group.ranks.front());
    }
  }
  return groups;
}

namespace {

std::string group_lines(const std::vector<StallGroup>& groups) {
  std::string text;
  for (const StallGroup& group : groups) {
    if (group.suspect) {
      text += fmt::format("ddl: suspect: rank {} on {}: {}\n", group.ranks.front(), group.host, group.where);
    } else {
      text += fmt::format("ddl: {} {}: {}\n", group.ranks.size() == 1 ? "rank" : "ranks",
                          compress_ranks(group.ranks), group.where);
    }
  }
  return text;
}

} // namespace

std::string hang_report(const Hang& hang, const ProgressBoard& board,
                        const std::vector<RankLaunch>& launches, const std::vector<std::string>& notes) {
  std::string text = fmt::format("ddl: error: {} {}: {}\n", hang.straggler ? "straggling" : "stalled",
                                 hang.ranks.size() == 1 ? "rank" : "ranks", compress_ranks(hang.ranks));
  text += group_lines(stall_groups(hang, board, launches));
  for (int rank : hang.ranks) {
    std::string host = host_of(launches, board, rank);
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
