// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/launcher_backend.hpp"

namespace ddl::mpirun {

// Splits mpirun's --tag-output streams ("[JOB,RANK]<stdout>:bytes") back into
// each rank's output. Open MPI tags every line and every chunk, so a tag may
// also start mid-line; bytes between tags belong to the last tag's rank.
// Untagged text is mpirun's own (kept for the failure report). The rank
// script's exit marker is taken out and remembered.
// How the launcher tags each rank's bytes: Open MPI's --tag-output
// ("[1,3]<stdout>:"), or Hydra's -prepend-rank ("[3] ", on each chunk it
// reads; a rank's failure is reported as soon as its marker is seen, since
// Hydra lets the others run on).
enum class TagStyle { open_mpi, hydra };

class TaggedOutput final : public LauncherOutput {
public:
  explicit TaggedOutput(Sink sink, TagStyle style = TagStyle::open_mpi)
      : LauncherOutput(std::move(sink)), style_(style) {}

  void feed(Stream stream, std::string_view bytes) override;
  void finish() override;
  // The rank of the first marker (its exit code, not a signal: the rank
  // script cannot tell them apart), else the rank mpirun says a signal
  // killed, else the first rank on a host that `ddl rsh` could not reach.
  std::optional<Blame> blame(const RankExit& whole, std::span<const RankLaunch> launches) const override;
  std::vector<std::pair<int, int>> take_ended() override;

  // The first rank that reported a non-zero exit, and its code.
  std::optional<std::pair<int, int>> first_failure() const { return first_failure_; }

private:
  struct StreamState {
    std::string pending;  // not yet decided (may hold a partial tag)
    int rank = -1;        // -1: mpirun's own text
    bool line_start = true;
  };
  void drain(Stream stream, StreamState& state, bool at_end);
  void emit(Stream stream, StreamState& state, std::string_view bytes);
  void emit_segment(Stream stream, StreamState& state, std::string_view bytes);
  void switch_rank(Stream stream, StreamState& state, int rank);

  TagStyle style_;
  std::vector<std::pair<int, int>> ended_;  // failures not yet taken (Hydra)
  StreamState out_;
  StreamState err_;
  std::string marker_line_[2];
  std::optional<std::pair<int, int>> first_failure_;
};

// From mpirun's own text: "process rank R ... exited on signal N".
std::optional<std::pair<int, int>> signalled_rank(std::string_view mpirun_text);

// `ddl rsh` (mpirun's agent) could not start Open MPI's daemon on a host:
// its "ddl: error: cannot start on 1 of 1 host:\n  HOST: why" in mpirun's
// text. `host` is "" when its error names none.
struct RshFailure {
  std::string host;
  std::string why;
};
std::optional<RshFailure> rsh_failure(std::string_view mpirun_text);

} // namespace ddl::mpirun
