// SPDX-License-Identifier: MIT
#pragma once

#include "backends/host_access.hpp"

namespace ddl::kubernetes {

// Pods reached with kubectl exec: their names and addresses are the pods'
// own, their slots and GPUs come from their GPU limits (kubernetes_inventory),
// and they have a network of their own. `hosts --check` runs the check shell
// in each pod with kubectl exec; nothing else is asked of them before the
// launch: the other answers are HostAccess's defaults (no GPU probe, no
// master port looked at).
class KubectlAccess final : public HostAccess {
public:
  explicit KubectlAccess(KubernetesSection k8s);

  // Per pod (a few kubectl exec at once), `ddl_path() --version` and
  // `nvidia-smi -L`'s count there (backends/host_check_probe.hpp); a pod
  // that kubectl cannot exec into is unreachable, with kubectl's first line.
  std::optional<std::vector<HostCheck>> check(const Inventory& hosts) override;

private:
  KubernetesSection k8s_;
};

} // namespace ddl::kubernetes
