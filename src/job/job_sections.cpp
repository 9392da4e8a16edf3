// SPDX-License-Identifier: MIT
// The table of the job file's sections, each with its keys and its reader;
// the readers of the small sections; the dispatcher over the table.
#include <algorithm>
#include <climits>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/text.hpp"

namespace ddl::job_detail {

namespace {

const std::vector<SectionReader>& section_readers() {
  static const std::vector<SectionReader> readers = {
      {"job", {"name", "command", "workdir", "python", "env", "env_pass", "frameworks", "timeout",
               "max_restarts", "grace", "log_dir", "strict_logs", "output_ranks", "prefix", "timestamps",
               "split_logs", "fold", "stop_signal", "checkpoint_signal", "checkpoint_grace", "requeue_exit_code",
               "setup", "env_file"}, read_job},
      {"hosts", {"list", "hostfile", "slurm", "discovery_script", "discovery_timeout", "slots"}, read_hosts},
      {"launch", {"backend", "np", "bind_gpus", "min_np", "max_host_losses", "host_failures", "restart_on",
                  "fail_on", "backoff", "bind"}, read_launch},
      {"placement", {"strategy", "constraints", "order"}, read_placement},
      {"ssh", {"user", "port", "identity", "config", "known_hosts", "host_key_check",
               "connect_timeout", "fanout", "remote_ddl"}, read_ssh},
      {"kubernetes", {"namespace", "selector", "container", "kubectl", "context"}, read_kubernetes},
      {"slurm", {"srun_args", "partition"}, read_slurm},
      {"mpirun", {"args", "flavour"}, read_mpirun},
      {"mpi", {"launch"}, read_mpi},
      {"rendezvous", {"address", "port", "timeout"}, read_rendezvous},
      {"torch", {"master_port"}, read_torch},
      {"tensorflow", {"chief", "ps", "evaluator", "port", "success"}, read_tensorflow},
      {"sweep", {"method", "samples", "seed", "max_parallel", "np", "retries", "metric", "parameters"}, read_sweep},
      {"watchdog", {"stall", "progress", "straggler", "dump", "dump_timeout"}, read_watchdog},
      {"preflight", {"enabled", "network", "min_fraction", "max_latency_factor", "budget", "on_fail"}, read_preflight},
      {"container", {"image", "runtime", "mounts", "options", "workdir"}, read_container},
      {"host_env", {}, read_host_env},
  };
  return readers;
}

// A key at the top of the file: a section that is no table, a table that is
// no section, or a key outside every section.
void check_top_level(std::string_view key, const toml::node& value, Position where, Diagnostics& diag) {
  const auto& names = section_names();
  bool known = std::find(names.begin(), names.end(), key) != names.end();
  if (known && !value.is_table()) {
    diag.at(value, fmt::format("{}: expected a table, got {}", key, type_phrase(value.type())));
  } else if (!known && value.is_table()) {
    std::string near = did_you_mean(key, names);
    diag.at(where, fmt::format("unknown section {}{}", quote_input(key),
                               near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
  } else if (!known) {
    std::string home;
    for (const std::string& section : names) {
      const auto& keys = section_keys(section);
      if (home.empty() && std::find(keys.begin(), keys.end(), key) != keys.end()) {
        home = section;
      }
    }
    diag.at(where, fmt::format("unknown top-level key {}{}", quote_input(key),
                               home.empty() ? "" : fmt::format("; it belongs in [{}]", home)));
  }
}

} // namespace

const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const SectionReader& reader : section_readers()) {
      out.push_back(reader.name);
    }
    return out;
  }();
  return names;
}

const std::vector<std::string>& section_keys(std::string_view section) {
  static const std::vector<std::string> metric = {"name", "goal"};  // [sweep] metric = { ... }
  static const std::vector<std::string> none;
  if (section == "sweep.metric") {
    return metric;
  }
  for (const SectionReader& reader : section_readers()) {
    if (reader.name == section) {
      return reader.keys;
    }
  }
  return none;
}

void read_string_array(const Section& section, std::string_view key,
                       const std::function<void(const toml::node&, const std::string&)>& accept) {
  const toml::array* items = section.read_array(key, "an array of strings");
  if (items == nullptr) {
    return;
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    const toml::node& item = *items->get(i);
    if (!item.is_string()) {
      section.diag().at(item, fmt::format("{}[{}]: expected a string, got {}", section.label(key),
                                          i, type_phrase(item.type())));
      continue;
    }
    accept(item, *item.value<std::string>());
  }
}

void read_launch(const SectionInput& in) {
  const Section launch = in.keys();
  JobSpec& job = in.job;
  std::string backend;
  if (launch.read_string("backend", backend)) {
    if (auto kind = parse_backend(backend)) {
      job.launch.backend = *kind;
    } else {
      in.diag.at(*launch.node("backend"), "launch.backend: " + choice_problem(backend, backend_names()));
    }
  }
  int np = 0;
  if (launch.read_int("np", np, 1, k_max_world_size)) {
    job.launch.np.max = np;
  }
  launch.read_bool("bind_gpus", job.launch.bind_gpus);
  read_bind(launch, job);
  read_elastic(launch, job);
}

void read_ssh(const SectionInput& in) {
  const Section ssh = in.keys();
  SshSection& out = in.job.ssh;
  ssh.read_string("user", out.user);
  int port = 0;
  if (ssh.read_int("port", port, 1, 65535)) {
    out.port = port;
  }
  ssh.read_string("identity", out.identity);
  ssh.read_string("config", out.config);
  ssh.read_string("known_hosts", out.known_hosts);
  read_choice(ssh, "host_key_check", {"yes", "accept-new", "no"}, out.host_key_check);
  ssh.read_duration("connect_timeout", out.connect_timeout, false);
  ssh.read_int("fanout", out.fanout, 1, INT_MAX);
  ssh.read_string("remote_ddl", out.remote_ddl);
}

void read_kubernetes(const SectionInput& in) {
  const Section k8s = in.keys();
  KubernetesSection& out = in.job.kubernetes;
  k8s.read_string("namespace", out.namespace_);
  k8s.read_string("selector", out.selector);
  k8s.read_string("container", out.container);
  k8s.read_string("kubectl", out.kubectl);
  k8s.read_string("context", out.context);
}

void read_slurm(const SectionInput& in) {
  const Section slurm = in.keys();
  SlurmSection& out = in.job.slurm;
  read_string_array(slurm, "srun_args", [&](const toml::node&, const std::string& arg) {
    out.srun_args.push_back(arg);
  });
  if (slurm.read_string("partition", out.partition) && !out.partition.empty()) {
    in.diag.at(*slurm.node("partition"),
               "slurm.partition: ddl does not request allocations; run it inside one "
               "(salloc -p PARTITION ... or sbatch -p PARTITION ...)");
  }
}

void read_mpirun(const SectionInput& in) {
  const Section mpirun = in.keys();
  MpirunSection& out = in.job.mpirun;
  read_string_array(mpirun, "args", [&](const toml::node&, const std::string& arg) {
    out.args.push_back(arg);
  });
  read_choice(mpirun, "flavour", {"auto", "openmpi", "mpich"}, out.flavour);
}

void read_mpi(const SectionInput& in) {
  const Section mpi = in.keys();
  if (std::string mpi_launch; mpi.read_string("launch", mpi_launch)) {
    if (auto parsed = parse_mpi_launch(mpi_launch)) {
      in.job.mpi.launch = *parsed;
    } else {
      in.diag.at(*mpi.node("launch"), "mpi.launch: " + choice_problem(mpi_launch, mpi_launch_names()));
    }
  }
}

void read_rendezvous(const SectionInput& in) {
  const Section rdzv = in.keys();
  rdzv.read_string("address", in.job.rendezvous.address);
  rdzv.read_int("port", in.job.rendezvous.port, 0, 65535);
  rdzv.read_duration("timeout", in.job.rendezvous.timeout, false);
}

void read_torch(const SectionInput& in) {
  const Section torch = in.keys();
  torch.read_int("master_port", in.job.torch.master_port, 0, 65535);
  // JAX's coordinator takes master_port + 1 (src/render/frameworks/jax.hpp);
  // refused here, where the key has its place in the file ([job] is read first).
  if (uses_framework(in.job, Framework::jax) && in.job.torch.master_port == 65535) {
    in.diag.at(*torch.node("master_port"),
               "torch.master_port: 65535 leaves no port for JAX's coordinator (master_port + 1); "
               "use at most 65534, or 0 for a free one");
  }
}

void read_tensorflow(const SectionInput& in) {
  const Section tf = in.keys();
  TensorflowSection& out = in.job.tensorflow;
  tf.read_int("chief", out.chief, 0, 1);
  tf.read_int("ps", out.ps, 0, INT_MAX);
  tf.read_int("evaluator", out.evaluator, 0, 1);
  tf.read_int("port", out.port, 1, 65535);
  read_choice(tf, "success", {"chief", "all"}, out.success);
}

void read_sections(const toml::table& root, const std::string& origin, JobSpec& job,
                   SourcePlaces& places, Diagnostics& diag) {
  for (auto&& [key, value] : root) {
    check_top_level(key.str(), value, position_of(key.source()), diag);
  }
  for (const SectionReader& reader : section_readers()) {
    reader.read(SectionInput{reader.name, root.get(reader.name), origin, job, places, diag});
  }
}

} // namespace ddl::job_detail
