// SPDX-License-Identifier: MIT
#pragma once

// --mpi pmix: the ranks ddl supervises are hosts (one `ddl worker pmix-host`
// each), and every line of one starts "[R] " for the MPI rank R that wrote it.
// --log-dir keeps one log per MPI rank all the same (rank_log_path of R): the
// router says which MPI rank a piece of a host's output belongs to, and its
// text without the tag.

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/launch/output_lines.hpp"

namespace ddl {

class RankTagRouter {
public:
  RankTagRouter() = default;  // inactive: rank logs are the gang's ranks
  // Each host's MPI rank count, in gang order (host h holds the ranks after
  // those of hosts 0..h-1).
  explicit RankTagRouter(const std::vector<int>& host_ranks);

  bool active() const { return !first_.empty(); }
  // The MPI ranks in all.
  int world_size() const { return first_.empty() ? 0 : first_.back(); }

  struct Routed {
    int rank = 0;
    std::string_view text;
    bool continues = false;  // tagged "[R+] ": the rank's line goes on in its next piece
  };
  // A piece of host `host`'s `stream`, ending as `end`. Tagged with one of
  // the host's ranks: that rank, the tag removed. Continuing a piece that was
  // cut or ended at '\r': where that one went. Else (the worker's own words):
  // the host's first rank, whole; a piece of a line too long for the worker
  // to hold, tagged "[R+] ", is R's and `continues`. Forgets what continues
  // (and whom the workers blamed) at `reset`.
  Routed route(int host, Stream stream, std::string_view text, LineEnd end);
  void reset() {
    continuing_.clear();
    blamed_.clear();
  }
  // The MPI rank whose failure host `host`'s worker reported (its verdict
  // line "ddl: error: rank R ..."), once it has.
  std::optional<int> blamed(int host) const;
  // The lines of MPI rank `rank` among a host's, their tags removed.
  static std::vector<std::string> lines_of(int rank, const std::deque<std::string>& host_lines);

private:
  std::vector<int> first_;  // the first MPI rank of each host, then the world size
  std::map<std::pair<int, Stream>, int> continuing_;
  std::map<int, int> blamed_;  // host -> the MPI rank its worker blamed
};

} // namespace ddl
