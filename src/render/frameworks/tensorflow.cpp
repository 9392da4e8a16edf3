// SPDX-License-Identifier: MIT
#include "src/render/frameworks/tensorflow.hpp"

#include "src/util/json.hpp"

namespace ddl {

std::string tf_config(const JobSpec& job, const Plan& plan, int rank) {
  (void)job;
  // The evaluator is no member of the training cluster (TensorFlow's
  // RunConfig rejects one there; Kubeflow's TFJob leaves it out): it knows
  // itself by its task alone.
  Json cluster = Json::object();
  for (const char* role : {"chief", "worker", "ps"}) {
    Json members = Json::array();
    for (const auto& slot : plan.ranks) {
      if (slot.tf_role == role) {
        members.push_back(bracket_ipv6(plan.hosts[slot.host_index].address) + ":" + std::to_string(slot.tf_port));
      }
    }
    if (!members.empty()) {
      cluster[role] = std::move(members);
    }
  }
  const auto& me = plan.ranks.at(static_cast<std::size_t>(rank));
  const Json doc = {{"cluster", std::move(cluster)}, {"task", {{"type", me.tf_role}, {"index", me.tf_index}}}};
  return to_json_text(doc);
}

int tf_job_ending_rank(const JobSpec& job, const Plan& plan) {
  if (!uses_framework(job, Framework::tensorflow) || job.tensorflow.success != TfSuccess::chief) {
    return -1;
  }
  for (const RankSlot& slot : plan.ranks) {
    if (slot.tf_role == "chief") {
      return slot.rank;
    }
  }
  return -1;
}

void add_tensorflow_env(EnvList& env, const JobSpec& job, const Plan& plan, int rank) {
  env.emplace_back("TF_CONFIG", tf_config(job, plan, rank));
}

} // namespace ddl
