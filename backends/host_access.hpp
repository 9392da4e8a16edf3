// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/job/job.hpp"
#include "src/launch/backend.hpp"

namespace ddl {

// The questions ddl asks of the hosts themselves, outside the launch: their
// addresses, the GPU probe of slots = "gpus", `hosts --check`, the elastic
// preflight, the interface toward rank 0, the CPU topology, the master port;
// and a rank's file read back after it ended (torch's error file).
// One HostAccess answers them for one way of reaching hosts: this machine
// (backends/local/local_access.hpp), ssh (backends/ssh/ssh_access.hpp), or
// kubectl exec into pods (backends/kubernetes/kubectl_access.hpp). The
// per-rank backends answer through theirs (PerRankBackend), mpirun through
// the one of its rsh agent, which `ddl rsh` reaches hosts with too; `hosts
// --check` asks the backend. Each default is the answer of a way that
// cannot look: the hosts as they are.
class HostAccess {
public:
  virtual ~HostAccess() = default;

  // Backend::resolve_addresses. Default: the hosts unchanged.
  virtual Inventory resolve_addresses(Inventory hosts) { return hosts; }
  // Backend::probe_gpus. Default: the hosts unchanged (pods: their GPU
  // limits stand).
  virtual Result<Inventory> probe_gpus(Inventory hosts) { return hosts; }
  // Backend::check; nullopt where this way cannot check hosts (the backend
  // then says so). Default: nullopt.
  virtual std::optional<std::vector<HostCheck>> check(const Inventory& /*hosts*/) { return std::nullopt; }
  // Backend::preflight. Default: every host "".
  virtual std::vector<std::string> preflight(const Inventory& hosts) {
    return std::vector<std::string>(hosts.size());
  }
  // Backend::find_interfaces. Default: none.
  virtual std::vector<HostInterface> find_interfaces(const Inventory& /*hosts*/, const std::string& /*target*/) {
    return {};
  }
  // Backend::read_topology; nullopt where this way does not read it.
  // Default: nullopt.
  virtual std::optional<std::vector<HostTopology>> read_topology(const Inventory& /*hosts*/) {
    return std::nullopt;
  }
  // Backend::gpu_counts. Default: an empty list (not counted).
  virtual std::vector<std::optional<int>> gpu_counts(const Inventory& /*hosts*/) { return {}; }
  // Backend::master_port. Default: nullopt (cannot look).
  virtual std::optional<Result<int>> master_port(const Host& /*host*/, int /*first*/, int /*count*/) {
    return std::nullopt;
  }
  // Backend::read_rank_file: the file `path` on the host, when written at
  // or after `since` and at most `max_bytes`. Default: nullopt (not read).
  virtual std::optional<std::string> read_rank_file(const std::string& /*path*/,
                                                    std::chrono::system_clock::time_point /*since*/,
                                                    std::size_t /*max_bytes*/) {
    return std::nullopt;
  }
  // The ddl binary on the hosts. Default: this one.
  virtual std::string ddl_path() const;
};

// How mpirun's rsh agent (`ddl rsh`) reaches a host.
enum class HostTransport { ssh, kubectl };

// The word DDL_RSH_TRANSPORT carries to `ddl rsh` ("ssh", "kubernetes"), and
// back (anything but "kubernetes" is ssh).
std::string_view transport_word(HostTransport transport);
HostTransport transport_of_word(std::string_view word);

// The host access of `transport` with the job's [ssh] or [kubernetes]; it
// keeps no connection between questions.
std::unique_ptr<HostAccess> make_host_access(HostTransport transport, const SshSection& ssh,
                                             const KubernetesSection& k8s);

} // namespace ddl
