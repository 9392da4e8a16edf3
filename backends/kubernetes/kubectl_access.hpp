// SPDX-License-Identifier: MIT
#pragma once

#include "backends/host_access.hpp"

namespace ddl::kubernetes {

// Pods reached with kubectl exec: their names and addresses are the pods'
// own, their slots and GPUs come from their GPU limits (kubernetes_inventory),
// and they have a network of their own, so nothing is asked of them before
// the launch: every answer is HostAccess's default (no GPU probe over ssh, no
// master port looked at, `hosts --check` not available).
class KubectlAccess final : public HostAccess {};

} // namespace ddl::kubernetes
