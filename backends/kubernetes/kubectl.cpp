// SPDX-License-Identifier: MIT
#include "backends/kubernetes/kubectl.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "backends/kubernetes/nodes.hpp"
#include "backends/kubernetes/pods.hpp"
#include "src/util/log.hpp"
#include "src/util/run_captured.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl::kubernetes {

namespace {

constexpr long k_get_pods_timeout_ms = 60'000;
// kubectl get pods -o json of a large cluster is tens of MiB.
constexpr std::size_t k_kubectl_max_output = std::size_t{1} << 30;

std::string where(const KubernetesSection& k8s) {
  return fmt::format("selector '{}' in namespace '{}'{}", k8s.selector, k8s.namespace_,
                     k8s.context.empty() ? "" : fmt::format(" (context '{}')", k8s.context));
}

// What a failed kubectl command said: its last stderr line, else how it ended.
std::string kubectl_failure(const Captured& captured) {
  if (captured.timed_out) {
    return "timed out";
  }
  if (captured.too_much_output) {
    return fmt::format("more than {} MiB of output", k_kubectl_max_output >> 20);
  }
  std::string why = last_lines(captured.err, 1);
  return why.empty() ? exit_text(captured.status) : why;
}

// kubectl's answer, or stop::error() when ddl is stopping.
Result<Captured> run_kubectl(const std::vector<std::string>& argv) {
  auto captured = run_captured(argv, Millis{k_get_pods_timeout_ms}, {.max_output = k_kubectl_max_output});
  if (captured && captured->stopped) {
    return fail(stop::error("running " + argv[0]));
  }
  return captured;
}

// The node of each pod, or why one has none.
Result<std::vector<std::string>> nodes_of(const PodScan& scan) {
  std::vector<std::string> nodes;
  for (const Host& pod : scan.ready) {
    auto found = scan.node_of.find(pod.name);
    if (found == scan.node_of.end()) {
      return fail(ExitCode::launch, fmt::format("pod {} has no spec.nodeName", pod.name));
    }
    nodes.push_back(found->second);
  }
  return nodes;
}

// Gives each ready pod of `scan` the labels of its node, all or none; the
// error says why not.
Result<void> add_node_labels(const KubernetesSection& k8s, PodScan& scan) {
  auto nodes = nodes_of(scan);
  if (!nodes) {
    return fail(nodes.error());
  }
  std::vector<std::string> unique = *nodes;
  std::ranges::sort(unique);
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  auto captured = run_kubectl(get_nodes_argv(k8s, unique));
  if (!captured) {
    return fail(captured.error());
  }
  if (!captured->succeeded()) {
    return fail(ExitCode::launch, "kubectl get nodes failed: " + kubectl_failure(*captured));
  }
  auto labels = parse_node_labels(captured->out);
  if (!labels) {
    return fail(labels.error());
  }
  for (const std::string& node : unique) {
    if (!labels->contains(node)) {
      return fail(ExitCode::launch, fmt::format("node {} is not in the output of kubectl get nodes", node));
    }
  }
  for (std::size_t i = 0; i < scan.ready.size(); ++i) {
    scan.ready[i].labels = labels->at((*nodes)[i]);
  }
  return {};
}

// Node labels as `need` asks: none, shown (a failure warned about), or
// required by [placement] (a failure stops the job).
Result<void> label_pods(const KubernetesSection& k8s, LabelNeed need, PodScan& scan) {
  if (need == LabelNeed::none) {
    return {};
  }
  auto added = add_node_labels(k8s, scan);
  if (added) {
    return {};
  }
  return labels_unread(scan.ready, need, added.error(), "pods shown without their node labels",
                       fmt::format("the labels of the nodes of the pods matching {}", where(k8s)),
                       "allow this user to get nodes (RBAC: get on the cluster-scoped resource \"nodes\"), "
                       "or take the labels out of [placement]");
}

} // namespace

std::vector<std::string> get_nodes_argv(const KubernetesSection& k8s, const std::vector<std::string>& nodes) {
  auto argv = kubectl_base(k8s);
  argv.insert(argv.end(), {"get", "nodes", "-o", "json", "--"});  // a node name is never an option
  argv.insert(argv.end(), nodes.begin(), nodes.end());
  return argv;
}

std::vector<std::string> kubectl_base(const KubernetesSection& k8s) {
  std::vector<std::string> argv{k8s.kubectl.empty() ? "kubectl" : k8s.kubectl};
  if (!k8s.context.empty()) {
    argv.insert(argv.end(), {"--context", k8s.context});
  }
  argv.insert(argv.end(), {"-n", k8s.namespace_.empty() ? "default" : k8s.namespace_});
  return argv;
}

std::vector<std::string> get_pods_argv(const KubernetesSection& k8s) {
  auto argv = kubectl_base(k8s);
  argv.insert(argv.end(), {"get", "pods", "-l", k8s.selector, "-o", "json"});
  return argv;
}

std::vector<std::string> exec_argv(const KubernetesSection& k8s, const std::string& pod,
                                   const std::vector<std::string>& remote_argv) {
  auto argv = kubectl_base(k8s);
  // kubectl exec takes no "--" before the pod: scan_pods refuses a pod name
  // that is not a valid host name (one that starts with '-' above all).
  argv.insert(argv.end(), {"exec", "-i", pod});
  if (!k8s.container.empty()) {
    argv.insert(argv.end(), {"-c", k8s.container});
  }
  argv.push_back("--");
  argv.insert(argv.end(), remote_argv.begin(), remote_argv.end());
  return argv;
}

bool is_remote_exit(std::string_view kubectl_stderr, int kubectl_code) {
  if (kubectl_code == 0) {
    return true;
  }
  std::string line = last_lines(kubectl_stderr, 1);
  if (!line.starts_with(k_remote_exit_prefix)) {
    return false;
  }
  auto code = parse_int(std::string_view(line).substr(k_remote_exit_prefix.size()));
  return code && *code == kubectl_code;
}

Result<Inventory> kubernetes_inventory(const KubernetesSection& k8s, int default_slots, LabelNeed labels) {
  if (k8s.selector.empty()) {
    return fail(ExitCode::usage,
                "backend kubernetes needs [kubernetes] selector (e.g. selector = \"app=trainer\")");
  }
  auto captured = run_kubectl(get_pods_argv(k8s));
  if (!captured) {
    return fail(captured.error());
  }
  if (!captured->succeeded()) {
    return fail(ExitCode::launch, fmt::format("kubectl get pods ({}) failed: {}", where(k8s), kubectl_failure(*captured)));
  }
  auto scan = scan_pods(captured->out, k8s.container, default_slots);
  if (!scan) {
    return fail(scan.error());
  }
  std::string skipped;
  for (const auto& pod : scan->skipped) {
    skipped += fmt::format("\n  {}: {}", pod.name, pod.reason);
  }
  if (scan->ready.empty()) {
    if (scan->skipped.empty()) {
      return fail(ExitCode::launch, fmt::format("no pods match {}", where(k8s)));
    }
    return fail(ExitCode::launch,
                fmt::format("no pod matching {} is Running and Ready:{}", where(k8s), skipped));
  }
  if (!scan->skipped.empty()) {
    print_warning(fmt::format("{} pod(s) matching {} skipped, not ready:{}", scan->skipped.size(),
                              where(k8s), skipped));
  }
  if (auto labelled = label_pods(k8s, labels, *scan); !labelled) {
    return fail(labelled.error());
  }
  return scan->ready;
}

} // namespace ddl::kubernetes
