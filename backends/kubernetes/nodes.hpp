// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "src/job/hostlist.hpp"
#include "src/util/error.hpp"

namespace ddl::kubernetes {

// Node name -> its labels, from the output of `kubectl get nodes NAME... -o
// json`: a v1 List of Nodes, or one Node (what kubectl prints for one name).
// A label that is not KEY=VALUE of letters, digits and . _ / - (which
// Kubernetes itself forbids) is left out. Errors (ExitCode::launch):
// malformed JSON, neither a List nor a Node.
Result<std::map<std::string, Labels>> parse_node_labels(std::string_view json_text);

} // namespace ddl::kubernetes
