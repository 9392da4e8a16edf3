// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/child_process.hpp"
#include "src/launch/backend.hpp"

namespace ddl::mpirun {

// The whole gang as one `mpirun` (see mpirun_command.hpp). ddl collects the
// rank launches and starts mpirun with the last one; mpirun places rank r on
// the host the plan gives it (the hostfile lists the plan's hosts in order
// with their rank counts) and aborts every rank when one fails, which is the
// gang semantics ddl wants. The first rank to fail is known from the rank
// script's marker (its exit code) or from mpirun's "exited on signal" note;
// the other ranks are reported as ended by SIGTERM.
// hosts --check and slots = "gpus" reach the hosts over ssh, as mpirun does.
struct MpirunOptions {
  std::string job_file;          // absolute; `ddl rsh` reads [ssh] / [kubernetes] there
  std::string rsh_transport;     // "ssh" or "kubernetes": how `ddl rsh` reaches hosts
  SshSection ssh;
  KubernetesSection kubernetes;
  std::optional<int> pod_slots;  // the pods of [kubernetes] selector are the hosts
  LabelNeed pod_labels = LabelNeed::none;  // their nodes' labels (kubernetes_inventory)
  std::vector<std::string> args;  // job.mpirun.args: given to mpirun after ddl's own options
};

class MpirunBackend final : public Backend {
public:
  explicit MpirunBackend(MpirunOptions options);
  ~MpirunBackend() override;

  std::string_view name() const override { return "mpirun"; }
  std::optional<Result<Inventory>> own_hosts() override;
  Inventory resolve_addresses(Inventory hosts) override;
  Result<Inventory> probe_gpus(Inventory hosts) override;
  std::vector<HostCheck> check(const Inventory& hosts) override;
  // A bind test when rank 0's host is this machine, else over ssh; pods:
  // nullopt (a network of their own).
  std::optional<Result<int>> master_port(const Host& host, int first, int count) override;
  bool starts_mpi_world() const override { return true; }
  // The mpirun command line, one word per line.
  std::string dry_run_text(std::span<const RankLaunch> launches) const override;

  Result<void> prepare(const Plan& plan, std::span<const RankLaunch> launches) override;
  Result<void> start(const RankLaunch& launch, RankEvents& events) override;
  void signal(int rank, int signo) override;
  void shutdown() override;

private:
  void run_mpirun(std::vector<std::string> argv, EnvList env, RankEvents& events);
  void report_exits(int status, class TaggedOutput& output, RankEvents& events);
  void report_unstarted_host(const struct RshFailure& failure, RankEvents& events);

  MpirunOptions options_;
  std::string hostfile_dir_;
  std::string hostfile_;
  int world_size_ = 0;

  std::vector<RankLaunch> launches_;
  GangChild gang_;  // its mutex also guards launches_ (and step_)
};

} // namespace ddl::mpirun
