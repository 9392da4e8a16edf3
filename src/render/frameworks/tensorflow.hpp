// SPDX-License-Identifier: MIT
#pragma once

// TensorFlow's rules: TF_CONFIG (the roles themselves are placed by the
// plan, src/plan: chief, worker, ps, evaluator; task port = tensorflow.port
// + local rank).

#include <string>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/util/env.hpp"

namespace ddl {

// TF_CONFIG for one rank (compact JSON): the same `cluster` of chief, worker
// and ps on every rank; the evaluator is not in it and has its task only.
std::string tf_config(const JobSpec& job, const Plan& plan, int rank);

// The rank whose clean end ends the job ([tensorflow] success = "chief" and
// a chief in the plan), or -1: every rank must end.
int tf_job_ending_rank(const JobSpec& job, const Plan& plan);

// TF_CONFIG.
void add_tensorflow_env(EnvList& env, const JobSpec& job, const Plan& plan, int rank);

} // namespace ddl
