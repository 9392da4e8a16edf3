// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

#include "backends/shim.hpp"

namespace ddl::kubernetes {

// Splits the stderr of `kubectl exec ... sh -c SHIM` into what the rank wrote
// and what kubectl wrote: everything before the shim's "ddl-shim: pid N"
// marker is kubectl's (its own failures: auth, pod not found), and a final
// "command terminated with exit code N" line is kubectl's report of the exit
// status, which ddl already passes on as the exit code.
class KubectlStderr {
public:
  // The bytes to pass on as the rank's stderr.
  std::string feed(std::string_view bytes);
  // At EOF, with kubectl's exit code: the rest to pass on.
  std::string finish(int kubectl_code);
  // True once the shim started the rank in the pod.
  bool shim_started() const { return shim_.pid().has_value(); }
  // What kubectl said before the shim ran (when it failed), trimmed.
  std::string kubectl_message() const;

private:
  std::string filter_exit_line(std::string_view bytes);

  ShimStderr shim_;
  std::string before_shim_;  // capped
  std::string held_;         // the current line, held while it may be kubectl's
  std::string pending_;      // a whole "command terminated..." line
  bool mid_line_ = false;    // inside a line that is surely the rank's
};

} // namespace ddl::kubernetes
