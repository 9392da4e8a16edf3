// SPDX-License-Identifier: MIT
#include "backends/kubernetes/nodes.hpp"

#include <fmt/core.h>
// nlohmann's inlined iterators trip GCC 12's -Wnull-dereference at -O2.
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <nlohmann/json.hpp>

#include "backends/kubernetes/json_fields.hpp"

namespace ddl::kubernetes {

namespace {

using nlohmann::json;

// The labels of one Node object; its name "" when it has none.
std::pair<std::string, Labels> node_labels(const json& node) {
  const json& metadata = member(node, "metadata");
  if (!metadata.is_object()) {
    return {};
  }
  std::string name = metadata.value("name", "");
  Labels labels;
  if (const json& named = member(metadata, "labels"); named.is_object()) {
    for (const auto& [key, value] : named.items()) {
      if (value.is_string()) {
        add_label(key + "=" + value.get<std::string>(), labels);  // a bad one is left out
      }
    }
  }
  return {std::move(name), std::move(labels)};
}

Result<std::map<std::string, Labels>> parse_nodes(const json& document) {
  std::map<std::string, Labels> nodes;
  if (document.is_object() && document.value("kind", "") == "Node") {
    nodes.insert(node_labels(document));
    return nodes;
  }
  const json& items = member(document, "items");
  if (!items.is_array()) {
    return fail(ExitCode::launch, "kubectl output is not a Node or a list of Nodes (no \"items\" array)");
  }
  for (const json& node : items) {
    auto [name, labels] = node_labels(node);
    if (!name.empty()) {
      nodes.emplace(std::move(name), std::move(labels));
    }
  }
  return nodes;
}

} // namespace

Result<std::map<std::string, Labels>> parse_node_labels(std::string_view json_text) {
  json document = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return fail(ExitCode::launch, "kubectl get nodes printed something that is not JSON");
  }
  try {
    return parse_nodes(document);
  } catch (const json::exception& e) {
    return fail(ExitCode::launch, fmt::format("unexpected kubectl JSON for nodes: {}", e.what()));
  }
}

} // namespace ddl::kubernetes
