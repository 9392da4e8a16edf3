// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

// --fold, the way `pdsh ... | dshbak -c` shows many hosts: each rank's whole
// output of an attempt (stdout and stderr lines in the order they arrived)
// is kept, and at the attempt's end ranks whose output is identical are
// printed once, under a header naming them:
//
//   ----------------
//   ranks 0-2,4 (node1,node2)
//   ----------------
//   the lines
//
// Whole outputs are compared, not single lines: a group means "these ranks
// said exactly this". Ranks that said nothing are left out. Memory is
// bounded: past its share a rank's output is cut, and the cut is said.
class FoldBuffer {
public:
  // Each rank keeps at most 64 MiB / world_size, between 16 KiB and 1 MiB.
  void reset(int world_size);
  void add(int rank, std::string_view text, std::string_view end);
  // The groups, in the order of their first rank; "" when no rank wrote.
  // `hosts[rank]` names each rank's host.
  std::string folded(const std::vector<std::string>& hosts) const;

private:
  struct RankText {
    std::string text;
    bool cut = false;
  };
  std::vector<RankText> ranks_;
  std::size_t cap_ = 0;
};

} // namespace ddl
