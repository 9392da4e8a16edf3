// SPDX-License-Identifier: MIT
#pragma once

// [placement]: which hosts get how many ranks, in what order, and why the
// others get none (Peloton's placement strategies, in a launcher's terms).

#include <optional>
#include <string>
#include <vector>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

namespace ddl {

// A host that gets no rank, and why ("constraint gpu=a100: has gpu=v100").
struct LeftOutHost {
  std::string name;
  std::string why;
};

// The hosts that get ranks, in rank order, with how many each.
struct Placement {
  Inventory hosts;
  std::vector<int> ranks;          // per entry of `hosts`, at least 1
  std::vector<LeftOutHost> left_out;  // constraints' first, then hosts not needed
  std::string how;                 // "pack: best fit, 1 of 3 hosts; order by rack"
};

// Why `host` does not meet `constraints` (every key must be a label of the
// host with that value); nullopt when it does.
std::optional<std::string> constraint_problem(const Labels& constraints, const Host& host);

// The hosts of `inventory` that meet the constraints, in topology order.
// `left_out` gets the others with the reason.
Inventory eligible_hosts(const PlacementSection& placement, const Inventory& inventory,
                         std::vector<LeftOutHost>& left_out);

// Places `np` ranks (1 <= np <= the eligible slots) on `inventory`:
// - constraints leave hosts out;
// - order = LABEL: hosts sharing the label's value are adjacent, groups in
//   the order their first host is listed, hosts without it last;
// - in order (no strategy): the first hosts, each filled;
// - pack: best fit: the fewest hosts, fullest first (while no host can take
//   the rest, the largest; then the smallest that can), kept in order;
// - spread: as many hosts as possible, the ranks shared out evenly.
// Each host's ranks stay adjacent. Errors: np above the eligible slots
// (ExitCode::usage), naming the hosts constraints left out.
Result<Placement> place_ranks(const PlacementSection& placement, const Inventory& inventory, long long np);

} // namespace ddl
