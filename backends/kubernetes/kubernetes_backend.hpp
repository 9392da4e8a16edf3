// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/per_rank_backend.hpp"

namespace ddl::kubernetes {

// Ranks inside pods: one `kubectl exec -i POD [-c C] -- sh -c SHIM` per rank,
// the shim of backends/shim.hpp reading the rank's env, workdir and argv on
// stdin. Closing that stdin (ddl ends, or is killed) ends the rank inside the
// pod, which a plain kill of kubectl would not; a heartbeat line every
// k_shim_heartbeat_period ends it too when it stops (kubectl killed without
// EOF reaching the pod, the pod cut off). The preflight checks in every pod
// at once that kubectl works and that the workdir and argv[0] exist. Ranks
// start in [job] workdir, else in the container's own.
class KubernetesBackend final : public PerRankBackend {
public:
  // `pod_slots`: the pods of [kubernetes] selector are the hosts, each with
  // this many slots when it has no GPU limit; nullopt: the job's own hosts
  // are pod names. `labels`: whether the pods get their nodes' labels
  // (kubernetes_inventory).
  explicit KubernetesBackend(const KubernetesSection& k8s, std::optional<int> pod_slots = std::nullopt,
                             LabelNeed labels = LabelNeed::none);
  ~KubernetesBackend() override;

  std::string_view name() const override { return "kubernetes"; }
  std::optional<Result<Inventory>> own_hosts() override;
  ContainerHost container_host() const override { return ContainerHost::pods; }
  bool takes_host_subsets() const override { return false; }

  // The stack dumper on the rank's host, onto its stderr (through the shim).
  bool dump_stacks(int rank, DumpTool tool, Millis timeout) override;
  void shutdown() override;

protected:
  Result<void> prepare_gang(const Plan& plan, std::span<const RankLaunch> launches) override;
  Result<void> preflight_unit(std::size_t unit, const Plan& plan, std::span<const RankLaunch> launches) override;
  std::string preflight_passed(const Plan& plan) override;
  PreflightWords preflight_words() const override { return {"in", "pod"}; }
  std::string host_label(const Host& host) const override { return "pod " + host.name; }
  Result<void> start_rank(const RankLaunch& launch, RankEvents& events) override;
  void signal_rank(int rank, int signo) override;

private:
  struct Rank {
    long pid = -1;
    int in_fd = -1;          // guarded by mutex; -1 once closed
    std::mutex mutex;
    std::atomic<bool> done{false};
    std::thread pump;
  };

  void write_control(Rank& rank, std::string_view line, bool then_close);
  void start_heartbeat();  // call with ranks_mutex_ held
  void stop_heartbeat();

  KubernetesSection k8s_;
  std::optional<int> pod_slots_;
  LabelNeed labels_;
  std::mutex ranks_mutex_;
  std::map<int, std::unique_ptr<Rank>> ranks_;
  // Writes k_shim_beat_line to every rank; its state is guarded by ranks_mutex_.
  std::thread heartbeat_;
  std::condition_variable heartbeat_wake_;
  bool heartbeat_stop_ = false;
};

} // namespace ddl::kubernetes
