// SPDX-License-Identifier: MIT
#include "backends/registry.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/core.h>

#include "backends/host_access.hpp"
#include "backends/kubernetes/kubernetes_backend.hpp"
#include "backends/local/local_backend.hpp"
#include "backends/mpirun/mpirun_backend.hpp"
#include "backends/slurm/slurm_backend.hpp"
#include "backends/ssh/ssh_backend.hpp"
#include "src/launch/plan_hosts.hpp"
#include "src/render/frameworks/mpi.hpp"
#include "src/util/net.hpp"

namespace ddl {

namespace {

// Stands in for a backend that is not built yet: every launch fails clearly.
class UnavailableBackend final : public Backend {
public:
  explicit UnavailableBackend(BackendKind kind) : name_(to_string(kind)) {}
  std::string_view name() const override { return name_; }
  Result<void> prepare(const Plan&, std::span<const RankLaunch>) override { return failure(); }
  GangStart start(std::span<const RankLaunch>, RankEvents&) override { return {0, failure().error()}; }
  void signal_all(int) override {}
  void shutdown() override {}

private:
  Result<void> failure() const {
    return fail(ExitCode::launch, fmt::format("backend {} is not available yet", name_));
  }
  std::string name_;
};

// True when the job's hosts are its pods: backend kubernetes, or backend
// mpirun with a [kubernetes] selector and no other host source.
bool pods_are_hosts(const JobSpec& job, BackendKind kind) {
  const HostsSection& hosts = job.hosts;
  bool other_source = !hosts.list.empty() || !hosts.hostfile.empty() || hosts.slurm == SlurmHosts::on ||
                      !hosts.discovery_script.empty();
  if (kind == BackendKind::kubernetes) {
    return !other_source || !job.kubernetes.selector.empty();
  }
  return kind == BackendKind::mpirun && !job.kubernetes.selector.empty() && !other_source;
}

// The slots of each pod when the job's hosts are its pods; nullopt else.
std::optional<int> pod_slots(const JobSpec& job, BackendKind kind) {
  if (!pods_are_hosts(job, kind)) {
    return std::nullopt;
  }
  return job.hosts.slots.value_or(1);
}

std::string absolute_job_file(const JobSpec& job) {
  if (job.source.empty()) {
    return {};
  }
  std::error_code ec;
  return std::filesystem::absolute(job.source, ec).string();
}

std::unique_ptr<Backend> make_mpirun(const JobSpec& job) {
  mpirun::MpirunOptions options;
  options.job_file = absolute_job_file(job);
  // How `ddl rsh` (mpirun's agent) reaches the hosts.
  options.rsh_transport = job.kubernetes.selector.empty() ? HostTransport::ssh : HostTransport::kubectl;
  options.ssh = job.ssh;
  options.kubernetes = job.kubernetes;
  options.pod_slots = pod_slots(job, BackendKind::mpirun);
  options.pod_labels = label_need(job);
  options.args = job.mpirun.args;
  options.flavour = job.mpirun.flavour;
  return std::make_unique<mpirun::MpirunBackend>(std::move(options));
}

using BackendFactory = std::unique_ptr<Backend> (*)(const JobSpec& job);

struct BackendEntry {
  BackendKind kind;
  BackendFactory make;
};

// One line per backend; a backend missing here is reported as unavailable.
constexpr BackendEntry k_backends[] = {
    {BackendKind::local, [](const JobSpec&) -> std::unique_ptr<Backend> { return std::make_unique<LocalBackend>(); }},
    {BackendKind::ssh,
     [](const JobSpec& job) -> std::unique_ptr<Backend> {
       return std::make_unique<SshBackend>(job.ssh, job.max_restarts > 0);
     }},
    {BackendKind::kubernetes,
     [](const JobSpec& job) -> std::unique_ptr<Backend> {
       return std::make_unique<kubernetes::KubernetesBackend>(
           job.kubernetes, pod_slots(job, BackendKind::kubernetes), label_need(job));
     }},
    {BackendKind::mpirun, make_mpirun},
    {BackendKind::slurm,
     [](const JobSpec& job) -> std::unique_ptr<Backend> {
       // PMIx: slurmstepd hosts the ranks' PMIx server (Slurm's mpi_pmix plugin).
       auto srun_args = job.slurm.srun_args;
       if (job.mpi.launch == MpiLaunch::pmix) {
         srun_args.emplace_back("--mpi=pmix");
       }
       return std::make_unique<slurm::SlurmBackend>(slurm::SlurmOptions{std::move(srun_args)});
     }},
};

std::unique_ptr<Backend> make_backend(const JobSpec& job, BackendKind kind) {
  for (const auto& entry : k_backends) {
    if (entry.kind == kind) {
      return entry.make(job);
    }
  }
  return std::make_unique<UnavailableBackend>(kind);
}

bool has_mpi(const JobSpec& job) {
  return std::ranges::find(job.frameworks, Framework::mpi) != job.frameworks.end();
}

// The mpi framework outside mpirun and PMIx: N one-rank MPI jobs that all
// "succeed"; PMIx with mpirun: two launchers for one world.
std::optional<std::string> mpi_problem(const JobSpec& job) {
  const BackendKind kind = job.launch.backend;
  if (job.mpi.launch == MpiLaunch::pmix) {
    if (kind != BackendKind::mpirun) {
      return std::nullopt;
    }
    return "backend mpirun and mpi.launch \"pmix\" (--mpi pmix): mpirun starts the ranks itself; "
           "use backend local, ssh, kubernetes or slurm (or auto) for ddl's own PMIx launch, or "
           "mpi.launch \"mpirun\"";
  }
  if (!has_mpi(job) || kind == BackendKind::automatic || kind == BackendKind::mpirun) {
    return std::nullopt;
  }
  return fmt::format("backend {} cannot run the mpi framework: every rank would be an MPI "
                     "singleton (a one-rank job of its own) and MPI_COMM_WORLD would never hold "
                     "them all; use backend mpirun (or auto, which picks it), or --mpi pmix",
                     to_string(kind));
}

struct Choice {
  BackendKind kind;
  std::string why;
};

// auto, where the hosts are not needed to decide; nullopt where they are.
std::optional<Choice> auto_without_hosts(const JobSpec& job) {
  if (has_mpi(job) && job.mpi.launch != MpiLaunch::pmix) {
    return Choice{BackendKind::mpirun, "auto: the mpi framework needs mpirun to make its ranks one MPI job"};
  }
  if (auto program = job.mpi.launch != MpiLaunch::pmix ? mpi_program(job) : std::nullopt) {
    return Choice{BackendKind::mpirun, fmt::format("auto: {} links the MPI library {}, and mpirun makes its "
                                                   "ranks one MPI job",
                                                   program->path, program->library)};
  }
  if (pods_are_hosts(job, BackendKind::kubernetes) && !job.kubernetes.selector.empty()) {
    return Choice{BackendKind::kubernetes, "auto: the [kubernetes] selector names the hosts"};
  }
  if (uses_slurm_allocation(job)) {
    return Choice{BackendKind::slurm, "auto: the hosts are the Slurm allocation ddl runs in"};
  }
  return std::nullopt;
}

// The first host that is not this machine, if any (names are looked up once).
const Host* first_remote_host(const Inventory& hosts) {
  std::set<std::string> seen;
  for (const Host& host : hosts) {
    if (seen.insert(host.address).second && !net::is_this_machine(host.address)) {
      return &host;
    }
  }
  return nullptr;
}

std::string host_shown(const Host& host) {
  return host.address == host.name ? fmt::format("'{}'", host.name)
                                   : fmt::format("'{}' ({})", host.name, host.address);
}

const Host* first_login_host(const Inventory& hosts) {
  auto found = std::ranges::find_if(hosts, [](const Host& host) { return !host.user.empty() || host.port; });
  return found == hosts.end() ? nullptr : &*found;
}

Choice auto_from_hosts(const Inventory& hosts) {
  if (const Host* login = first_login_host(hosts)) {
    return {BackendKind::ssh, fmt::format("auto: host {} names an ssh login", host_shown(*login))};
  }
  if (const Host* remote = first_remote_host(hosts)) {
    return {BackendKind::ssh, fmt::format("auto: host {} is not this machine", host_shown(*remote))};
  }
  return {BackendKind::local, "auto: every host is this machine"};
}

// The hosts as --include / --exclude leave them, to choose and check the
// backend by (the host pipeline filters them for the plan itself); all of
// them while the slots are GPUs still to be probed.
Result<Inventory> filtered_view(const Inventory& hosts, const JobSpec& job) {
  if (job.hosts.slots_from_gpus) {
    return hosts;
  }
  return filter_hosts(hosts, job.hosts);
}

// user@host and host:port:slots are ssh logins; other backends cannot honour them.
Result<void> logins_fit(const Inventory& hosts, std::string_view backend) {
  const Host* login = first_login_host(hosts);
  if (login == nullptr || backend == "ssh") {
    return {};
  }
  return fail(ExitCode::usage, fmt::format("host {} names an ssh login ({}), which backend {} cannot use; "
                                           "use backend ssh",
                                           host_shown(*login), login_address(*login), backend));
}

} // namespace

std::unique_ptr<Backend> rsh_backend(const JobSpec& job, std::string_view word) {
  if (transport_of_word(word) == HostTransport::kubectl) {
    return std::make_unique<kubernetes::KubernetesBackend>(job.kubernetes);
  }
  return std::make_unique<SshBackend>(job.ssh);
}

Result<void> check_backend_for_plan(const JobSpec& job, const Backend& backend, const Plan& plan) {
  if (plan.world_size < 2 || backend.starts_mpi_world() || !backend.starts_ranks_alone() ||
      job.mpi.launch == MpiLaunch::pmix) {
    return {};
  }
  auto program = mpi_program(job);
  if (!program) {
    return {};
  }
  return fail(ExitCode::usage,
              fmt::format("{} links the MPI library {}: backend {} would start its {} ranks as {} one-rank MPI "
                          "jobs (MPI singletons) that never form one MPI_COMM_WORLD; use --backend mpirun (or "
                          "auto, which picks it), frameworks = [\"mpi\"], or --mpi pmix",
                          program->path, program->library, backend.name(), plan.world_size, plan.world_size));
}

std::string pmix_auto_backend_problem(const JobSpec& job) {
  const BackendKind kind = job.launch.backend;
  if (kind != BackendKind::local && kind != BackendKind::ssh && kind != BackendKind::automatic) {
    return fmt::format("backend {} is not local or ssh", to_string(kind));
  }
  JobSpec as_pmix = job;
  as_pmix.mpi.launch = MpiLaunch::pmix;
  if (auto other = kind == BackendKind::automatic ? auto_without_hosts(as_pmix) : std::nullopt) {
    return fmt::format("backend auto picks {}, not local or ssh", to_string(other->kind));
  }
  return "";
}

Result<SelectedBackend> select_backend(const JobSpec& job) {
  if (auto problem = mpi_problem(job)) {
    return fail(ExitCode::usage, *problem);
  }
  if (job.launch.backend == BackendKind::slurm && !inside_slurm_allocation()) {
    return fail(ExitCode::usage,
                "backend slurm starts the ranks as a step of the Slurm allocation ddl runs in, "
                "but SLURM_JOB_ID is not set; run ddl inside salloc or sbatch (ddl does not "
                "request allocations itself)");
  }
  Choice choice{job.launch.backend, ""};
  std::optional<Inventory> listed;
  if (choice.kind == BackendKind::automatic) {
    if (auto early = auto_without_hosts(job)) {
      choice = std::move(*early);
    } else {
      auto hosts = discover_hosts(job);
      auto view = hosts ? filtered_view(*hosts, job) : hosts;
      if (!view) {
        return fail(view.error());
      }
      choice = auto_from_hosts(*view);
      listed = std::move(*hosts);
    }
  }
  SelectedBackend selected{make_backend(job, choice.kind), {}, std::move(choice.why)};
  auto hosts = listed ? Result<Inventory>(std::move(*listed)) : found_hosts(job, *selected.backend);
  auto view = hosts ? filtered_view(*hosts, job) : hosts;
  if (!view) {
    return fail(view.error());
  }
  selected.hosts = std::move(*hosts);
  if (auto fits = logins_fit(*view, selected.backend->name()); !fits) {
    return fail(fits.error());
  }
  if (job.launch.backend == BackendKind::local) {
    if (const Host* remote = first_remote_host(*view)) {
      return fail(ExitCode::usage,
                  fmt::format("backend local runs every rank on this machine, but host {} is not "
                              "this machine; use backend ssh (or auto, the default) to reach it",
                              host_shown(*remote)));
    }
  }
  return selected;
}

} // namespace ddl
