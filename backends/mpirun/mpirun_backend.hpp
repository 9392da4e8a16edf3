// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/host_access.hpp"
#include "backends/launcher_backend.hpp"
#include "src/job/job.hpp"

namespace ddl::mpirun {

// The whole gang as one `mpirun` (see mpirun_command.hpp); mpirun places
// rank r on the host the plan gives it (the hostfile lists the plan's hosts in order
// with their rank counts) and aborts every rank when one fails, which is the
// gang semantics ddl wants. The first rank to fail is known from the rank
// script's marker (its exit code) or from mpirun's "exited on signal" note;
// the other ranks are reported as ended by SIGTERM.
// hosts --check, slots = "gpus" and the master port reach the hosts as
// mpirun's rsh agent does (`ddl rsh`: ssh, or kubectl exec into pods).
struct MpirunOptions {
  std::string job_file;          // absolute; `ddl rsh` reads [ssh] / [kubernetes] there
  HostTransport rsh_transport = HostTransport::ssh;  // how `ddl rsh` reaches hosts
  SshSection ssh;
  KubernetesSection kubernetes;
  std::optional<int> pod_slots;  // the pods of [kubernetes] selector are the hosts
  LabelNeed pod_labels = LabelNeed::none;  // their nodes' labels (kubernetes_inventory)
  std::vector<std::string> args;  // job.mpirun.args: given to mpirun after ddl's own options
  MpiFlavour flavour = MpiFlavour::automatic;  // [mpirun] flavour
};

// Which MPI `mpirun --version` (or `mpiexec.hydra --version`) says it is:
// openmpi for "mpirun (Open MPI) ...", mpich for Hydra's "HYDRA build
// details"; nullopt for anything else.
std::optional<MpiFlavour> flavour_of_version(std::string_view version_text);

class MpirunBackend final : public LauncherBackend {
public:
  explicit MpirunBackend(MpirunOptions options);
  ~MpirunBackend() override;

  std::string_view name() const override { return "mpirun"; }
  std::optional<Result<Inventory>> own_hosts() override;
  Inventory resolve_addresses(Inventory hosts) override;
  Result<Inventory> probe_gpus(Inventory hosts) override;
  std::vector<HostCheck> check(const Inventory& hosts) override;
  // A bind test when rank 0's host is this machine, else as the rsh agent
  // reaches it (ssh; pods: nullopt, a network of their own).
  std::optional<Result<int>> master_port(const Host& host, int first, int count) override;
  bool starts_mpi_world() const override { return true; }

protected:
  // Open MPI's mpirun, or MPICH's Hydra (flavour), on PATH; the plan's hostfile.
  Result<void> find_launcher(const Plan& plan) override;
  Result<LauncherCommand> command(std::span<const RankLaunch> launches, bool dry_run) override;
  std::unique_ptr<LauncherOutput> parse_output(int world_size, LauncherOutput::Sink sink) override;
  // SIGKILL would orphan mpirun's local ranks (its own TERM ends them all);
  // SIGSTOP would stop mpirun itself (its SIGTSTP stops the ranks).
  void deliver(int signo) override;
  // The stack dumper on the rank's host: here, or through the rsh agent
  // (`ddl rsh`, as mpirun reaches the host), finding the rank by its number
  // and the job's DDL_RENDEZVOUS.
  std::optional<std::vector<std::string>> dump_command(const RankLaunch& launch, DumpTool tool,
                                                       Millis timeout) override;

private:
  Result<void> find_flavour();

  MpirunOptions options_;
  std::unique_ptr<HostAccess> access_;  // the rsh agent's way to the hosts
  MpiFlavour flavour_ = MpiFlavour::openmpi;  // as found by find_launcher
  std::string program_ = "mpirun";            // mpirun, or mpiexec.hydra for mpich
  std::string hostfile_;  // the plan's, written by find_launcher
  std::string rsh_exec_;  // mpich: Hydra's launcher script, beside the hostfile
};

} // namespace ddl::mpirun
