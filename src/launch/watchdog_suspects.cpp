// SPDX-License-Identifier: MIT
#include "src/launch/watchdog_suspects.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <string_view>

#include <fmt/core.h>

#include "src/util/rank_list.hpp"

namespace ddl {

namespace {

constexpr std::size_t k_native_frames = 3;

bool starts_with(std::string_view text, std::string_view prefix) { return text.starts_with(prefix); }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// A thread's header in faulthandler, py-spy or gdb output.
bool thread_header(std::string_view line) {
  return starts_with(line, "Thread ") || starts_with(line, "Current thread ");
}

bool main_thread(std::string_view header) {
  return starts_with(header, "Current thread ") || header.find("\"MainThread\"") != std::string_view::npos ||
         starts_with(header, "Thread 1 ");
}

// faulthandler and py-bt: `  File "x.py", line 4 in f`; py-spy: `    f (x.py:4)`.
bool python_frame(std::string_view line) {
  return starts_with(line, "  File \"") ||
         (starts_with(line, "    ") && line.ends_with(")") && line.find(".py:") != std::string_view::npos);
}

// gdb: `#0  0x00007f in clock_nanosleep (...) at f.c:3` or `#2  f (n=1) at f.c:9`: the function.
std::optional<std::string> native_function(std::string_view line) {
  if (line.size() < 2 || line[0] != '#' || line[1] < '0' || line[1] > '9') {
    return std::nullopt;
  }
  auto rest = trimmed(line.substr(line.find_first_of(" ") == std::string_view::npos ? line.size() : line.find(' ')));
  if (starts_with(rest, "0x")) {
    auto in = rest.find(" in ");
    if (in == std::string_view::npos) {
      return std::nullopt;
    }
    rest = rest.substr(in + 4);
  }
  return std::string(rest.substr(0, rest.find_first_of(" (")));
}

struct Thread {
  bool main = false;
  std::vector<std::string> python;  // innermost first
  std::vector<std::string> native;
};

std::vector<Thread> threads_of(const std::vector<std::string>& evidence) {
  std::vector<Thread> threads;
  for (const std::string& line : evidence) {
    if (thread_header(line)) {
      threads.push_back(Thread{main_thread(line), {}, {}});
      continue;
    }
    if (threads.empty()) {
      threads.emplace_back();  // frames before any header (a single-thread dump)
    }
    if (python_frame(line)) {
      threads.back().python.emplace_back(trimmed(line));
    } else if (auto function = native_function(line)) {
      threads.back().native.push_back(std::move(*function));
    }
  }
  return threads;
}

// The main thread's frames of one kind, else the first thread's that has them.
const std::vector<std::string>* pick(const std::vector<Thread>& threads, bool python) {
  const std::vector<std::string>* first = nullptr;
  for (const Thread& thread : threads) {
    const auto& frames = python ? thread.python : thread.native;
    if (frames.empty()) {
      continue;
    }
    if (thread.main) {
      return &frames;
    }
    if (first == nullptr) {
      first = &frames;
    }
  }
  return first;
}

// "in f < g < h": the first three of `frames`, innermost first.
std::string innermost_three(std::span<const std::string> frames) {
  std::string where = "in ";
  for (std::size_t i = 0; i < frames.size() && i < k_native_frames; ++i) {
    where += (i == 0 ? "" : " < ") + frames[i];
  }
  return where;
}

// The outermost `depth` frames of `stack` (innermost first): its last ones.
std::span<const std::string> outer(const std::vector<std::string>& stack, std::size_t depth) {
  return std::span<const std::string>(stack).last(std::min(depth, stack.size()));
}

std::string joined(std::span<const std::string> frames) {
  std::string key;
  for (const std::string& frame : frames) {
    key += frame + "\n";
  }
  return key;
}

// The deepest depth (frames from the outermost in) at which more than half
// of the ranks with a stack share their frames; 0 when none.
std::size_t shared_depth(const std::vector<const std::vector<std::string>*>& stacks) {
  std::size_t deepest = 0;
  for (const auto* stack : stacks) {
    deepest = std::max(deepest, stack->size());
  }
  std::size_t depth = 0;
  for (std::size_t d = 1; d <= deepest; ++d) {
    std::map<std::string, std::size_t> alike;
    std::size_t most = 0;
    for (const auto* stack : stacks) {
      if (stack->size() >= d) {
        most = std::max(most, ++alike[joined(outer(*stack, d))]);
      }
    }
    if (most * 2 <= stacks.size()) {
      break;
    }
    depth = d;
  }
  return depth;
}

} // namespace

std::optional<std::string> innermost_frames(const std::vector<std::string>& evidence) {
  const auto threads = threads_of(evidence);
  if (const auto* python = pick(threads, true)) {
    return python->front();
  }
  if (const auto* native = pick(threads, false)) {
    return innermost_three(*native);
  }
  return std::nullopt;
}

std::vector<std::string> native_stack(const std::vector<std::string>& evidence) {
  const auto threads = threads_of(evidence);
  const auto* native = pick(threads, false);
  return pick(threads, true) == nullptr && native != nullptr ? *native : std::vector<std::string>{};
}

std::vector<std::string> native_places(const std::vector<int>& ranks,
                                       const std::vector<std::vector<std::string>>& stacks) {
  std::vector<const std::vector<std::string>*> present;
  for (int rank : ranks) {
    if (const auto& stack = stacks.at(static_cast<std::size_t>(rank)); !stack.empty()) {
      present.push_back(&stack);
    }
  }
  const std::size_t depth = shared_depth(present);
  std::vector<std::string> places(stacks.size());
  for (int rank : ranks) {
    const auto& stack = stacks[static_cast<std::size_t>(rank)];
    if (!stack.empty()) {
      places[static_cast<std::size_t>(rank)] =
          innermost_three(depth == 0 ? std::span<const std::string>(stack) : outer(stack, depth));
    }
  }
  return places;
}

std::vector<StallGroup> group_by_place(const std::vector<int>& ranks, const std::vector<std::string>& where) {
  std::vector<StallGroup> groups;
  std::map<std::string, std::size_t> index;
  for (int rank : ranks) {
    const std::string& place = where.at(static_cast<std::size_t>(rank));
    auto [it, added] = index.emplace(place, groups.size());
    if (added) {
      groups.push_back(StallGroup{{}, place, false, {}});
    }
    groups[it->second].ranks.push_back(rank);
  }
  std::ranges::stable_sort(groups, [](const auto& a, const auto& b) { return a.ranks.size() > b.ranks.size(); });
  if (groups.size() < 2 || groups[0].ranks.size() == groups[1].ranks.size()) {
    return groups;  // alike, or no majority to differ from
  }
  std::vector<StallGroup> ordered;
  for (std::size_t i = 1; i < groups.size(); ++i) {
    for (int rank : groups[i].ranks) {
      ordered.push_back(StallGroup{{rank}, groups[i].where, true, {}});
    }
  }
  std::ranges::sort(ordered, [](const auto& a, const auto& b) { return a.ranks.front() < b.ranks.front(); });
  ordered.push_back(std::move(groups[0]));
  return ordered;
}

std::vector<StallGroup> lagging_steps(const std::vector<int>& ranks,
                                      const std::vector<std::optional<long long>>& steps) {
  std::optional<long long> highest;
  for (int rank : ranks) {
    if (const auto& step = steps.at(static_cast<std::size_t>(rank))) {
      highest = std::max(highest.value_or(*step), *step);
    }
  }
  std::vector<int> ahead;
  std::vector<StallGroup> lagging;
  for (int rank : ranks) {
    const auto& step = steps.at(static_cast<std::size_t>(rank));
    if (step && *step < *highest) {
      lagging.push_back(StallGroup{{rank}, fmt::format("at step {}", *step), true, {}});
    } else if (step) {
      ahead.push_back(rank);
    }
  }
  for (StallGroup& group : lagging) {
    group.where += fmt::format(" while rank{} {} reached step {}", ahead.size() == 1 ? "" : "s",
                               compress_ranks(ahead), *highest);
  }
  return lagging;
}

} // namespace ddl
