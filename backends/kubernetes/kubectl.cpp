// SPDX-License-Identifier: MIT
#include "backends/kubernetes/kubectl.hpp"

#include <fmt/core.h>

#include "backends/child_process.hpp"
#include "backends/kubernetes/pods.hpp"
#include "src/util/log.hpp"
#include "src/util/text.hpp"

namespace ddl::kubernetes {

namespace {

constexpr long k_get_pods_timeout_ms = 60'000;

std::string last_line(std::string_view text) {
  text = trim(text);
  auto newline = text.rfind('\n');
  return std::string(newline == std::string_view::npos ? text : text.substr(newline + 1));
}

std::string where(const KubernetesSection& k8s) {
  return fmt::format("selector '{}' in namespace '{}'{}", k8s.selector, k8s.namespace_,
                     k8s.context.empty() ? "" : fmt::format(" (context '{}')", k8s.context));
}

} // namespace

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
  std::string line = last_line(kubectl_stderr);
  if (!line.starts_with(k_remote_exit_prefix)) {
    return false;
  }
  auto code = parse_int(std::string_view(line).substr(k_remote_exit_prefix.size()));
  return code && *code == kubectl_code;
}

Result<Inventory> kubernetes_inventory(const KubernetesSection& k8s, int default_slots) {
  if (k8s.selector.empty()) {
    return fail(ExitCode::usage,
                "backend kubernetes needs [kubernetes] selector (e.g. selector = \"app=trainer\")");
  }
  auto captured = run_captured(get_pods_argv(k8s), k_get_pods_timeout_ms);
  if (!captured) {
    return fail(captured.error());
  }
  if (captured->timed_out || captured->exit.code != 0) {
    std::string why = captured->timed_out ? "timed out" : last_line(captured->err);
    return fail(ExitCode::launch, fmt::format("kubectl get pods ({}) failed: {}", where(k8s),
                                              why.empty() ? "exit " + std::to_string(captured->exit.code) : why));
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
  return scan->ready;
}

} // namespace ddl::kubernetes
