// SPDX-License-Identifier: MIT
#pragma once

// What a round asks each plan host through the backend before any rank
// starts: its interface toward rank 0, its CPU topology, its GPU count, and
// (rank 0's host) a free master port.

#include <vector>

#include "src/job/job.hpp"
#include "src/launch/backend.hpp"
#include "src/plan/plan.hpp"

namespace ddl::session {

// The address of rank 0's host: what MASTER_ADDR names and what every host's
// interface is chosen toward.
std::string rank0_address(const Plan& plan);

// Per plan host, the interface toward rank 0's address, found through the
// backend on each host. Empty when the user sets every one of
// k_interface_variables (job.env, -x, env_pass) or the backend does not
// look. Hosts where none was found are logged as warnings; a stop (Ctrl-C,
// the deadline) while probing is an error.
Result<std::vector<HostInterface>> job_interfaces(const JobSpec& job, Backend& backend, const Plan& plan);

// [launch] bind: per plan host, its CPU topology read through the backend
// on the host itself; empty with bind none. A host that cannot be read is
// said once (a warning) and its ranks run unbound; a stop while reading is
// an error.
Result<std::vector<HostTopology>> job_topologies(const JobSpec& job, Backend& backend, const Plan& plan);

// [launch] bind_gpus: the plan hosts whose GPUs the plan assumed (a list or
// a hostfile gave only slots) counted through the backend, over the
// connection the launch keeps to each (Backend::gpu_counts); on a host with
// none, no rank is bound to a GPU (mark_no_gpus), so that no
// CUDA_VISIBLE_DEVICES (nor a container's GPU option) names GPUs that are
// not there. A stop while counting is an error.
Result<void> unbind_absent_gpus(const JobSpec& job, Backend& backend, Plan& plan);

// torch.master_port as launched, looked at on rank 0's host through the
// backend: the job's, checked free (with the ports its frameworks take after
// it), or free ones when it is 0.
Result<int> launch_master_port(const JobSpec& job, Backend& backend, const Plan& plan);

} // namespace ddl::session
