// SPDX-License-Identifier: MIT
#include "backends/kubernetes/kubectl_access.hpp"

#include <fmt/core.h>

#include "backends/host_check_probe.hpp"
#include "backends/kubernetes/kubectl.hpp"
#include "src/util/host_progress.hpp"
#include "src/util/parallel.hpp"
#include "src/util/process.hpp"
#include "src/util/run_captured.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl::kubernetes {

namespace {

// As many kubectl exec at once as the kubernetes backend's preflight
// (PerRankBackend::preflight_fanout), each bounded as its check is.
constexpr int k_check_fanout = 16;
constexpr long k_check_timeout_ms = 60'000;

// The first line kubectl wrote, else how it ended.
std::string kubectl_error(const Captured& captured) {
  for (const auto& raw : split(captured.err, '\n')) {
    if (std::string_view line = trim(raw); !line.empty()) {
      return std::string(line);
    }
  }
  return "kubectl exec " + exit_text(captured.status);
}

HostCheck check_pod(const KubernetesSection& k8s, const Host& pod, const std::string& ddl_path) {
  HostCheck check;
  if (stop::requested()) {
    check.error = stop::error("checking the pods").message;
    return check;
  }
  auto argv = exec_argv(k8s, pod.name, {"sh", "-c", host_check_script(), "ddl-check", ddl_path});
  auto captured = run_captured(argv, Millis{k_check_timeout_ms});
  if (!captured) {
    check.error = captured.error().message;
    return check;
  }
  if (captured->stopped) {
    check.error = stop::error("checking the pods").message;
    return check;
  }
  if (captured->timed_out) {
    check.error = "kubectl exec timed out";
    return check;
  }
  // The shell's own exit (0, or N with kubectl's "command terminated with
  // exit code N"): the pod was reached; anything else is kubectl's failure.
  const ProcessExit how = process_exit(captured->status);
  if (how.signal != 0 || !is_remote_exit(captured->err, how.code)) {
    check.error = kubectl_error(*captured);
    return check;
  }
  check = read_host_check(captured->out, how.code, ddl_path);
  check.reachable = true;
  return check;
}

} // namespace

KubectlAccess::KubectlAccess(KubernetesSection k8s) : k8s_(std::move(k8s)) {}

std::optional<std::vector<HostCheck>> KubectlAccess::check(const Inventory& hosts) {
  std::vector<HostCheck> checks(hosts.size());
  std::vector<std::string> names;
  for (const Host& host : hosts) {
    names.push_back(host.name);
  }
  HostProgress progress("checked", std::move(names));
  const std::string ddl = ddl_path();
  for_each_parallel(hosts.size(), k_check_fanout, [&](std::size_t i) {
    progress.begin(i);
    checks[i] = check_pod(k8s_, hosts[i], ddl);
    progress.end(i, checks[i].reachable ? std::string_view() : std::string_view(checks[i].error));
  });
  return checks;
}

} // namespace ddl::kubernetes
