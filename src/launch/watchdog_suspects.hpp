// SPDX-License-Identifier: MIT
#pragma once

// The watchdog's comparison of the stalled ranks (issue 30): where each rank
// is (its innermost frames from its stack dump, else its last line), the
// ranks grouped by it, the odd ones out named as suspects, and the ranks
// whose progress step lags the others'.

#include <optional>
#include <string>
#include <vector>

namespace ddl {

// One group of ranks alike, or one suspect rank.
struct StallGroup {
  std::vector<int> ranks;
  std::string where;     // "  File \"x.py\", line 4 in <module>", "in f < g", "last line: step 3", "at step 4 ..."
  bool suspect = false;  // an odd one out: its place differs from the majority's, or its step lags
  std::string host;      // a suspect's host (filled by stall_groups)
};

// Where a rank is, from its dump: the innermost Python frame of its main
// thread (faulthandler, py-spy, gdb's py-bt), else the innermost three
// native functions of gdb's thread 1 ("in clock_nanosleep < sleep < f");
// nullopt when the dump holds no frame.
std::optional<std::string> innermost_frames(const std::vector<std::string>& evidence);

// The native functions of the dump's main thread, innermost first, when the
// dump holds native frames and no Python frame (where innermost_frames names
// native functions); else empty.
std::vector<std::string> native_stack(const std::vector<std::string>& evidence);

// Where each of `ranks` is, from its native stack (`stacks`, indexed by
// rank; a rank without one gets ""): its stack from the outermost frame in,
// cut at the deepest frame that more than half of these ranks still share,
// then its innermost three functions, "in f < g < main". Ranks waiting in
// the same call are alike so, whatever its progress loop was running at the
// instant of their dumps (an MPI barrier). Without such a majority even on
// the outermost frame: each rank's own innermost three.
std::vector<std::string> native_places(const std::vector<int>& ranks, const std::vector<std::vector<std::string>>& stacks);

// `ranks` grouped by `where` (indexed by rank): when one group is larger
// than every other, the ranks of the others come first, one suspect each;
// then the groups, largest first.
std::vector<StallGroup> group_by_place(const std::vector<int>& ranks, const std::vector<std::string>& where);

// The ranks whose step (indexed by rank) is below the highest one among
// `ranks`, as suspects: "at step 4 while ranks 0,2-3 reached step 5".
std::vector<StallGroup> lagging_steps(const std::vector<int>& ranks, const std::vector<std::optional<long long>>& steps);

} // namespace ddl
