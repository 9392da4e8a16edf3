// SPDX-License-Identifier: MIT
// Jobs and inventories built in code, shared by the plan and render tests.
#pragma once

#include <string>
#include <vector>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

namespace ddl::test {

inline Host make_host(std::string name, int slots, std::vector<int> gpus = {},
                      std::string source = "list") {
  Host host;
  host.address = name;
  host.name = std::move(name);
  host.slots = slots;
  host.gpus = std::move(gpus);
  host.source = std::move(source);
  return host;
}

// 2 hosts x 2 slots, every framework.
inline JobSpec all_frameworks_job() {
  JobSpec job;
  job.name = "golden";
  job.command = {"python3", "train.py", "--lr", "0.1"};
  job.env = {{"NCCL_DEBUG", "WARN"}, {"QUOTED", "it's a \"value\" $HOME"}};
  job.frameworks = {Framework::torch, Framework::tensorflow, Framework::horovod, Framework::jax,
                    Framework::mpi};
  job.max_restarts = 2;
  return job;
}

inline Inventory two_by_two() { return {make_host("node-a", 2), make_host("node-b", 2)}; }

// Uneven slots, np below the total, GPUs known on some hosts, tf roles.
inline JobSpec uneven_job() {
  JobSpec job;
  job.name = "uneven";
  job.command = {"python3 train.py > out.log"};
  job.command_is_shell = true;
  job.frameworks = {Framework::torch, Framework::tensorflow, Framework::horovod};
  job.launch.np.max = 5;
  job.tensorflow.ps = 1;
  job.tensorflow.evaluator = 1;
  job.tensorflow.port = 3000;
  return job;
}

inline Inventory uneven_hosts() {
  return {make_host("gpu1", 3, {0, 1, 2, 3, 4, 5}), make_host("cpu1", 1),
          make_host("gpu2", 2, {7}), make_host("spare", 4)};
}

} // namespace ddl::test
