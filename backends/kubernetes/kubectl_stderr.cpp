// SPDX-License-Identifier: MIT
#include "backends/kubernetes/kubectl_stderr.hpp"

#include "backends/kubernetes/kubectl.hpp"
#include "src/util/text.hpp"

namespace ddl::kubernetes {

namespace {

constexpr std::size_t k_max_kubectl_message = 16 * 1024;

// Could `line` (without its newline) still turn out to be kubectl's line?
bool may_be_exit_line(std::string_view line) {
  std::string_view prefix = k_remote_exit_prefix;
  if (line.size() <= prefix.size()) {
    return prefix.starts_with(line);
  }
  return line.starts_with(prefix) && line.size() < prefix.size() + 12;
}

} // namespace

std::string KubectlStderr::feed(std::string_view bytes) {
  std::string passed = shim_.feed(bytes);
  if (!shim_started()) {  // before the shim's pid line: kubectl's own words (or the login shell's)
    if (before_shim_.size() < k_max_kubectl_message) {
      before_shim_.append(passed.substr(0, k_max_kubectl_message - before_shim_.size()));
    }
    return "";
  }
  return filter_exit_line(passed);
}

std::string KubectlStderr::filter_exit_line(std::string_view bytes) {
  std::string out;
  while (!bytes.empty()) {
    if (mid_line_) {
      auto newline = bytes.find('\n');
      std::size_t take = newline == std::string_view::npos ? bytes.size() : newline + 1;
      out.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      mid_line_ = newline == std::string_view::npos;
      continue;
    }
    char c = bytes.front();
    bytes.remove_prefix(1);
    if (c == '\n' && may_be_exit_line(held_) && held_.size() > k_remote_exit_prefix.size()) {
      out += pending_;  // an earlier look-alike was the rank's after all
      pending_ = held_ + "\n";
      held_.clear();
      continue;
    }
    held_ += c;
    if (c == '\n' || !may_be_exit_line(held_)) {
      out += pending_;
      out += held_;
      pending_.clear();
      mid_line_ = c != '\n';
      held_.clear();
    }
  }
  return out;
}

std::string KubectlStderr::finish(int kubectl_code) {
  std::string rest = shim_.flush();
  if (!shim_started()) {
    before_shim_.append(rest.substr(0, k_max_kubectl_message));
    return "";
  }
  std::string out = filter_exit_line(rest);
  std::string exact = std::string(k_remote_exit_prefix) + std::to_string(kubectl_code) + "\n";
  if (pending_ != exact || !held_.empty()) {
    out += pending_;
  }
  out += held_;
  pending_.clear();
  held_.clear();
  return out;
}

std::string KubectlStderr::kubectl_message() const { return std::string(trim(before_shim_)); }

} // namespace ddl::kubernetes
