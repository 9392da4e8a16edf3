// SPDX-License-Identifier: MIT
#include "backends/host_access.hpp"

#include "backends/kubernetes/kubectl_access.hpp"
#include "backends/ssh/ssh_access.hpp"
#include "src/util/process.hpp"

namespace ddl {

std::string HostAccess::ddl_path() const { return own_executable_path(); }

std::string_view transport_word(HostTransport transport) {
  return transport == HostTransport::kubectl ? "kubernetes" : "ssh";
}

HostTransport transport_of_word(std::string_view word) {
  return word == transport_word(HostTransport::kubectl) ? HostTransport::kubectl : HostTransport::ssh;
}

std::unique_ptr<HostAccess> make_host_access(HostTransport transport, const SshSection& ssh,
                                             const KubernetesSection& k8s) {
  if (transport == HostTransport::kubectl) {
    return std::make_unique<kubernetes::KubectlAccess>(k8s);
  }
  return std::make_unique<SshAccess>(ssh, SshAccess::Keep::nothing);
}

} // namespace ddl
