// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"
#include "src/inventory/inventory.hpp"

namespace ddl::kubernetes {

// A Kubernetes quantity ("8", "1k", "2Ki", "1e3", "500m") as a whole number.
// A fractional value ("500m", "1.5") or anything malformed is an error: GPUs
// are whole devices, and Kubernetes itself only schedules whole ones.
Result<long long> parse_whole_quantity(std::string_view text);

// A pod that cannot take ranks, and why ("phase Pending", "not Ready: ...").
struct SkippedPod {
  std::string name;
  std::string reason;
};

struct PodScan {
  Inventory ready;                 // Running + Ready + IP, in name order
  std::vector<SkippedPod> skipped; // in name order
  std::map<std::string, std::string> node_of;  // ready pod -> its spec.nodeName (when set)
};

// Reads the output of `kubectl get pods -o json` (a v1 List of Pods).
// `container`: whose nvidia.com/gpu limit gives the slots ("" = the pod's
// default container: annotation kubectl.kubernetes.io/default-container,
// else the first). `default_slots`: [hosts] slots when the limit is absent.
// Errors (ExitCode::launch): malformed JSON, a fractional GPU limit.
Result<PodScan> scan_pods(std::string_view json_text, const std::string& container,
                          int default_slots);

} // namespace ddl::kubernetes
