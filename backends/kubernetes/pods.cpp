// SPDX-License-Identifier: MIT
#include <algorithm>

#include <fmt/core.h>
// nlohmann's inlined iterators trip GCC 12's -Wnull-dereference at -O2.
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <nlohmann/json.hpp>

#include "backends/kubernetes/json_fields.hpp"
#include "backends/kubernetes/pods.hpp"
#include "src/job/job.hpp"
#include "src/util/text.hpp"

namespace ddl::kubernetes {

namespace {

using nlohmann::json;

constexpr const char* k_gpu_resource = "nvidia.com/gpu";
constexpr const char* k_default_container_annotation = "kubectl.kubernetes.io/default-container";

// Why a pod cannot take ranks; "" when it can.
std::string unready_reason(const json& pod) {
  const json& metadata = member(pod, "metadata");
  const json& status = member(pod, "status");
  if (!text_at(metadata, "deletionTimestamp").empty()) {
    return "terminating";
  }
  std::string phase = text_at(status, "phase");
  if (phase != "Running") {
    std::string why = text_at(status, "reason");
    return fmt::format("phase {}{}", phase.empty() ? "unknown" : phase,
                       why.empty() ? "" : " (" + why + ")");
  }
  bool ready = false;
  std::string not_ready_detail;
  for (const json& condition : member(status, "conditions")) {
    if (text_at(condition, "type") != "Ready") {
      continue;
    }
    ready = text_at(condition, "status") == "True";
    std::string why = text_at(condition, "reason");
    std::string message = text_at(condition, "message");
    not_ready_detail = why.empty() ? message : (message.empty() ? why : why + ": " + message);
  }
  if (!ready) {
    return not_ready_detail.empty() ? "not Ready" : "not Ready (" + not_ready_detail + ")";
  }
  if (text_at(status, "podIP").empty()) {
    return "no pod IP yet";
  }
  return "";
}

// The container whose GPU limit counts; nullptr when `wanted` is not in the pod.
const json* pick_container(const json& pod, const std::string& wanted) {
  const json& containers = member(member(pod, "spec"), "containers");
  if (!containers.is_array() || containers.empty()) {
    return nullptr;
  }
  std::string name = wanted;
  if (name.empty()) {
    name = text_at(member(member(pod, "metadata"), "annotations"), k_default_container_annotation);
  }
  if (name.empty()) {
    return &containers.front();
  }
  for (const json& container : containers) {
    if (text_at(container, "name") == name) {
      return &container;
    }
  }
  return nullptr;
}

// The GPU limit of `container`: 0 when absent.
Result<int> gpu_limit(const json& container, const std::string& pod_name) {
  const json& limits = member(member(container, "resources"), "limits");
  const json& quantity = member(limits, k_gpu_resource);
  if (quantity.is_null()) {
    return 0;
  }
  std::string text = quantity.is_string() ? quantity.get<std::string>() : quantity.dump();
  auto value = parse_whole_quantity(text);
  if (!value) {
    return fail(ExitCode::launch, fmt::format("pod {}: {} limit {}", pod_name, k_gpu_resource,
                                              value.error().message));
  }
  if (*value > 1'000'000) {
    return fail(ExitCode::launch,
                fmt::format("pod {}: {} limit {} is too large", pod_name, k_gpu_resource, text));
  }
  return static_cast<int>(*value);
}

Result<Host> pod_host(const json& pod, const std::string& container_name, int default_slots) {
  std::string name = text_at(member(pod, "metadata"), "name");
  Host host;
  host.name = name;
  host.address = text_at(member(pod, "status"), "podIP");
  host.source = "kubernetes";
  host.slots = default_slots;
  const json* container = pick_container(pod, container_name);
  if (container == nullptr) {
    return fail(ExitCode::launch, fmt::format("pod {} has no container '{}'", name, container_name));
  }
  auto gpus = gpu_limit(*container, name);
  if (!gpus) {
    return fail(gpus.error());
  }
  if (*gpus > 0) {
    host.slots = *gpus;
    for (int i = 0; i < *gpus; ++i) {
      host.gpus.push_back(i);
    }
  }
  return host;
}

// Name order with digit runs compared as numbers: trainer-2 before trainer-10.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t i_end = a.find_first_not_of("0123456789", i);
      std::size_t j_end = b.find_first_not_of("0123456789", j);
      std::string_view x = std::string_view(a).substr(i, i_end - i);
      std::string_view y = std::string_view(b).substr(j, j_end - j);
      x.remove_prefix(std::min(x.find_first_not_of('0'), x.size()));
      y.remove_prefix(std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) {
        return x.size() < y.size();
      }
      if (x != y) {
        return x < y;
      }
      i = i_end == std::string::npos ? a.size() : i_end;
      j = j_end == std::string::npos ? b.size() : j_end;
      continue;
    }
    if (a[i] != b[j]) {
      return a[i] < b[j];
    }
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j || (a.size() - i == b.size() - j && a < b);
}

Result<PodScan> scan_parsed(const json& list, const std::string& container, int default_slots) {
  const json& items = member(list, "items");
  if (!items.is_array()) {
    return fail(ExitCode::launch, "kubectl output is not a list of pods (no \"items\" array)");
  }
  PodScan scan;
  std::vector<std::string> problems;
  for (const json& pod : items) {
    std::string name = text_at(member(pod, "metadata"), "name");
    if (name.empty()) {
      problems.push_back("a pod without metadata.name");
      continue;
    }
    if (auto why = host_name_problem(name)) {  // it goes on kubectl's command line
      problems.push_back(fmt::format("pod {}: not a name ddl passes to kubectl: {}", quote_input(name), *why));
      continue;
    }
    if (std::string why = unready_reason(pod); !why.empty()) {
      scan.skipped.push_back({name, why});
      continue;
    }
    auto host = pod_host(pod, container, default_slots);
    if (!host) {
      problems.push_back(host.error().message);
      continue;
    }
    if (std::string node = text_at(member(pod, "spec"), "nodeName"); !node.empty()) {
      scan.node_of[name] = std::move(node);
    }
    scan.ready.push_back(std::move(*host));
  }
  if (!problems.empty()) {
    std::string message;
    for (const auto& problem : problems) {
      message += (message.empty() ? "" : "\n") + problem;
    }
    return fail(ExitCode::launch, message);
  }
  auto by_name = [](const auto& a, const auto& b) { return natural_less(a.name, b.name); };
  std::sort(scan.ready.begin(), scan.ready.end(), by_name);
  std::sort(scan.skipped.begin(), scan.skipped.end(), by_name);
  return scan;
}

} // namespace

Result<PodScan> scan_pods(std::string_view json_text, const std::string& container,
                          int default_slots) {
  json list = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (list.is_discarded()) {
    return fail(ExitCode::launch, "kubectl printed something that is not JSON");
  }
  try {
    return scan_parsed(list, container, default_slots);
  } catch (const json::exception& e) {
    return fail(ExitCode::launch, fmt::format("unexpected kubectl JSON: {}", e.what()));
  }
}

} // namespace ddl::kubernetes
