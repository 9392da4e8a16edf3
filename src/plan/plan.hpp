// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "src/util/error.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/plan/placement.hpp"

namespace ddl {

// One rank's place in the job.
struct RankSlot {
  int rank = 0;
  std::size_t host_index = 0;  // into Plan::hosts
  int local_rank = 0;
  int local_size = 0;
  int node_rank = 0;
  int cross_rank = 0;          // Horovod: index among hosts with this local_rank
  int cross_size = 0;
  std::vector<int> gpus;       // GPUs of this rank (bind_gpus)
  std::string tf_role;         // chief | worker | ps | evaluator
  int tf_index = 0;
  int tf_port = 0;             // tensorflow.port + local_rank
};

// The plan, computed once and used by --dry-run, render and the launch.
struct Plan {
  std::string job;
  int world_size = 0;
  Inventory hosts;             // only hosts that got at least one rank
  std::vector<RankSlot> ranks;
  std::string placement;       // how the hosts were chosen (Placement::how)
  std::vector<LeftOutHost> left_out;  // hosts without a rank, and why
};

// Whether `host.gpus` is its real list: a GPU probe's (Host::gpus_probed,
// this machine's source "local") or its source's; else the plan assumes one
// GPU per slot, GPU `local rank` (bind_gpus).
bool gpus_known(const Host& host);

// Host `host_index` of `plan`, whose GPUs the plan assumed, has none (a probe
// found none after the plan was made): it is marked so and none of its ranks
// is bound to a GPU.
void mark_no_gpus(Plan& plan, std::size_t host_index);

// Places the ranks by [placement] (place_ranks), host by host, each host's
// ranks adjacent; with placement.by_node (mpirun's --map-by node) dealt
// round-robin over those hosts instead (rank r on host r mod H while every
// host has room); with placement.oversubscribe, np above the slots adds the
// rest to the hosts in turn. Errors: np above the slots (exit 2).
Result<Plan> make_plan(const JobSpec& job, const Inventory& inventory);

} // namespace ddl
