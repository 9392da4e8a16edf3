// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/launch/backend.hpp"
#include "src/util/error.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

namespace ddl::kubernetes {

// kubectl [--context C] -n NAMESPACE: the start of every kubectl command.
std::vector<std::string> kubectl_base(const KubernetesSection& k8s);

// kubectl get pods -n NS -l SELECTOR -o json.
std::vector<std::string> get_pods_argv(const KubernetesSection& k8s);

// kubectl get nodes NAME... -o json (nodes have no namespace; kubectl ignores -n).
std::vector<std::string> get_nodes_argv(const KubernetesSection& k8s, const std::vector<std::string>& nodes);

// kubectl exec -i -n NS POD [-c CONTAINER] -- sh -c SCRIPT [ARGS...].
std::vector<std::string> exec_argv(const KubernetesSection& k8s, const std::string& pod,
                                   const std::vector<std::string>& remote_argv);

// kubectl prints "command terminated with exit code N" when the command in the
// pod exits non-zero, and exits N itself; anything else non-zero is kubectl's
// own failure (auth, pod not found, no such container).
bool is_remote_exit(std::string_view kubectl_stderr, int kubectl_code);

// The line kubectl writes for a remote exit, which ddl keeps out of the rank's
// output (the exit code already says it).
inline constexpr std::string_view k_remote_exit_prefix = "command terminated with exit code ";

// Finds the pods of [kubernetes] selector: Running and Ready ones become the
// inventory in name order (`default_slots` each without a GPU limit); the
// others are warned about with the reason. None ready, kubectl failing, or
// bad output: ExitCode::launch. Unless `labels` is none, each pod gets the
// labels of its node (spec.nodeName), read by one `kubectl get nodes`; when
// that fails (e.g. RBAC forbids reading nodes): shown, a warning; required,
// ExitCode::launch with kubectl's words.
Result<Inventory> kubernetes_inventory(const KubernetesSection& k8s, int default_slots,
                                       LabelNeed labels = LabelNeed::none);


} // namespace ddl::kubernetes
