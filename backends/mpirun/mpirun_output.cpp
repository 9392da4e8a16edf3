// SPDX-License-Identifier: MIT
#include "backends/mpirun/mpirun_output.hpp"

#include <fmt/core.h>

#include "backends/mpirun/mpirun_command.hpp"
#include "src/util/text.hpp"

namespace ddl::mpirun {

namespace {

constexpr std::size_t k_max_tag = 48;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// At `text`[0] == '[': the tag's length and rank; 0 when it is surely no tag;
// nullopt when `text` is too short to tell.
struct TagMatch {
  std::size_t length = 0;
  int rank = -1;
};
// Hydra's -prepend-rank: "[digits] ".
std::optional<TagMatch> match_hydra_tag(std::string_view text) {
  std::size_t i = 1;
  while (i < text.size() && i <= 10 && is_digit(text[i])) {
    ++i;
  }
  if (i == text.size()) {
    return std::nullopt;
  }
  if (i == 1 || text[i] != ']') {
    return TagMatch{};
  }
  if (i + 1 == text.size()) {
    return std::nullopt;
  }
  auto rank = parse_int(text.substr(1, i - 1));
  if (text[i + 1] != ' ' || !rank || *rank >= 1'000'000'000) {
    return TagMatch{};
  }
  return TagMatch{i + 2, static_cast<int>(*rank)};
}

std::optional<TagMatch> match_tag(std::string_view text, TagStyle style) {
  if (style == TagStyle::hydra) {
    return match_hydra_tag(text);
  }
  // [digits,digits]<stdout>:
  std::size_t i = 1;
  auto digits = [&]() -> std::optional<bool> {
    std::size_t begin = i;
    while (i < text.size() && is_digit(text[i])) {
      ++i;
    }
    if (i == text.size()) {
      return std::nullopt;
    }
    return i > begin;
  };
  auto ok = digits();
  if (!ok) {
    return std::nullopt;
  }
  if (!*ok || text[i] != ',') {
    return TagMatch{};
  }
  std::size_t rank_begin = ++i;
  ok = digits();
  if (!ok) {
    return std::nullopt;
  }
  if (!*ok || text[i] != ']') {
    return TagMatch{};
  }
  auto rank = parse_int(text.substr(rank_begin, i - rank_begin));
  ++i;
  for (std::string_view word : {"<stdout>:", "<stderr>:"}) {
    std::string_view rest = text.substr(i);
    if (rest.size() < word.size() && word.starts_with(rest)) {
      return std::nullopt;
    }
    if (rest.starts_with(word) && rank && *rank < 1'000'000'000) {
      return TagMatch{i + word.size(), static_cast<int>(*rank)};
    }
  }
  return TagMatch{};
}

} // namespace

void TaggedOutput::feed(Stream stream, std::string_view bytes) {
  StreamState& state = stream == Stream::out ? out_ : err_;
  state.pending.append(bytes);
  drain(stream, state, false);
}

void TaggedOutput::finish() {
  drain(Stream::out, out_, true);
  drain(Stream::err, err_, true);
  for (int s = 0; s < 2; ++s) {
    StreamState& state = s == 0 ? out_ : err_;
    if (!marker_line_[s].empty() && state.rank >= 0) {
      to_rank(state.rank, s == 0 ? Stream::out : Stream::err, marker_line_[s]);
    }
    marker_line_[s].clear();
  }
}

void TaggedOutput::emit(Stream stream, StreamState& state, std::string_view bytes) {
  if (state.rank < 0) {
    launcher_says(bytes);
    return;
  }
  // The rank script's marker is a whole line of its own on stderr.
  std::string& marker = marker_line_[stream == Stream::out ? 0 : 1];
  if (stream == Stream::err && (state.line_start || !marker.empty())) {
    marker.append(bytes);
    std::string_view prefix = k_rank_script.exit_marker;
    bool could_be = marker.size() <= prefix.size() ? prefix.starts_with(marker) : marker.starts_with(prefix);
    auto newline = marker.find('\n');
    if (could_be && newline == std::string::npos && marker.size() < 64) {
      return;
    }
    if (could_be && newline != std::string::npos) {
      // "ddl-mpi: rank R exit C\n"
      if (auto failure = parse_exit_marker(std::string_view(marker).substr(0, newline), prefix)) {
        if (!first_failure_) {
          first_failure_ = failure;
        }
        ended_.push_back(*failure);
        std::string rest = marker.substr(newline + 1);
        marker.clear();
        state.line_start = true;
        if (!rest.empty()) {
          emit(stream, state, rest);
        }
        return;
      }
    }
    std::string held = std::move(marker);
    marker.clear();
    to_rank(state.rank, stream, held);
    state.line_start = held.ends_with('\n');
    return;
  }
  if (!bytes.empty()) {
    to_rank(state.rank, stream, bytes);
    state.line_start = bytes.ends_with('\n');
  }
}

// Open MPI tags every line a rank writes: after a rank's newline, text up
// to the next tag is mpirun's own.
// Hydra tags each chunk it reads: text up to the next tag stays the rank's.
void TaggedOutput::emit_segment(Stream stream, StreamState& state, std::string_view bytes) {
  if (style_ == TagStyle::hydra) {
    emit(stream, state, bytes);
    return;
  }
  auto newline = bytes.find('\n');
  if (state.rank < 0 || newline == std::string_view::npos || newline + 1 == bytes.size()) {
    emit(stream, state, bytes);
    if (state.rank >= 0 && bytes.ends_with('\n')) {
      switch_rank(stream, state, -1);
    }
    return;
  }
  emit(stream, state, bytes.substr(0, newline + 1));
  switch_rank(stream, state, -1);
  emit(stream, state, bytes.substr(newline + 1));
}

void TaggedOutput::switch_rank(Stream stream, StreamState& state, int rank) {
  if (state.rank == rank) {
    return;
  }
  std::string& marker = marker_line_[stream == Stream::out ? 0 : 1];
  if (!marker.empty() && state.rank >= 0) {
    to_rank(state.rank, stream, marker);
  }
  marker.clear();
  state.line_start = true;
  state.rank = rank;
}

void TaggedOutput::drain(Stream stream, StreamState& state, bool at_end) {
  std::string_view text = state.pending;
  std::size_t done = 0;
  while (done < text.size()) {
    std::size_t bracket = text.find('[', done);
    if (bracket == std::string_view::npos) {
      emit_segment(stream, state, text.substr(done));
      done = text.size();
      break;
    }
    auto tag = match_tag(text.substr(bracket), style_);
    if (!tag) {
      if (at_end || text.size() - bracket > k_max_tag) {
        emit_segment(stream, state, text.substr(done));
        done = text.size();
      } else {
        emit_segment(stream, state, text.substr(done, bracket - done));
        done = bracket;
      }
      break;
    }
    if (tag->length == 0) {
      emit_segment(stream, state, text.substr(done, bracket + 1 - done));
      done = bracket + 1;
      continue;
    }
    emit_segment(stream, state, text.substr(done, bracket - done));
    switch_rank(stream, state, tag->rank);
    done = bracket + tag->length;
  }
  state.pending.erase(0, done);
}

std::vector<std::pair<int, int>> TaggedOutput::take_ended() {
  // Hydra lets the other ranks run on after one fails; Open MPI ends them itself.
  if (style_ != TagStyle::hydra) {
    return {};
  }
  return std::exchange(ended_, {});
}

std::optional<Blame> TaggedOutput::blame(const RankExit& whole, std::span<const RankLaunch> launches) const {
  if (first_failure_) {
    return Blame{first_failure_->first, RankExit{first_failure_->second}};
  }
  if (auto signalled = signalled_rank(launcher_text())) {
    return Blame{signalled->first, RankExit{128 + signalled->second, signalled->second}};
  }
  auto unreached = whole.code != 0 ? rsh_failure(launcher_text()) : std::nullopt;
  if (!unreached) {
    return std::nullopt;
  }
  // `ddl rsh` could not reach (or log in to) a host: its first rank failed
  // to start, with the agent's reason; the others were ended with it.
  int rank = 0;
  for (const RankLaunch& launch : launches) {
    if (!unreached->host.empty() && (launch.host.address == unreached->host || launch.host.name == unreached->host)) {
      rank = launch.rank;
      break;
    }
  }
  std::string error = unreached->host.empty()
                          ? fmt::format("mpirun's agent (ddl rsh) failed: {}", unreached->why)
                          : fmt::format("host {} could not be reached to start Open MPI's daemon there: {}",
                                        unreached->host, unreached->why);
  return Blame{rank, RankExit{to_int(ExitCode::launch), 0, error}};
}

std::optional<std::pair<int, int>> signalled_rank(std::string_view mpirun_text) {
  constexpr std::string_view k_lead = "process rank ";
  auto at = mpirun_text.find(k_lead);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view rest = mpirun_text.substr(at + k_lead.size());
  auto rank = parse_int(rest.substr(0, rest.find(' ')));
  constexpr std::string_view k_signal = "exited on signal ";
  auto sig_at = rest.find(k_signal);
  if (!rank || sig_at == std::string_view::npos) {
    return std::nullopt;
  }
  rest = rest.substr(sig_at + k_signal.size());
  auto signo = parse_int(rest.substr(0, rest.find(' ')));
  if (!signo) {
    return std::nullopt;
  }
  return std::pair{static_cast<int>(*rank), static_cast<int>(*signo)};
}

std::optional<RshFailure> rsh_failure(std::string_view mpirun_text) {
  constexpr std::string_view k_error = "ddl: error: ";
  std::size_t start = mpirun_text.find(k_error);
  if (start == std::string_view::npos) {
    return std::nullopt;
  }
  std::vector<std::string> lines = split(mpirun_text.substr(start + k_error.size()), '\n');
  RshFailure failure{"", lines.front()};
  // The per-host lines follow, indented: "  HOST: why".
  if (lines.size() > 1 && lines[1].starts_with("  ")) {
    std::string_view line = std::string_view(lines[1]).substr(2);
    std::size_t colon = line.find(": ");
    if (colon != std::string_view::npos) {
      failure.host = std::string(line.substr(0, colon));
      failure.why = std::string(line.substr(colon + 2));
    }
  }
  return failure;
}

} // namespace ddl::mpirun
