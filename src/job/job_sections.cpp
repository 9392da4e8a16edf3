// SPDX-License-Identifier: MIT
// Reads each [section] of the job file into JobSpec.
#include <algorithm>
#include <climits>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/text.hpp"

namespace ddl::job_detail {

namespace {

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> names = {"torch", "tensorflow", "horovod", "jax", "mpi"};
  return names;
}

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

void read_command(const Section& job_section, JobSpec& job) {
  const toml::node* value = job_section.node("command");
  if (value == nullptr) {
    return;
  }
  Diagnostics& diag = job_section.diag();
  if (const auto* line = value->as_string()) {
    if (line->get().empty()) {
      diag.at(*value, "job.command: must not be empty");
    } else if (has_nul(line->get())) {
      diag.at(*value, "job.command: contains a NUL byte");
    } else {
      job.command = {line->get()};
      job.command_is_shell = true;
    }
    return;
  }
  const auto* words = value->as_array();
  if (words == nullptr) {
    job_section.wrong_type("command", *value, "an array of strings or a string");
    return;
  }
  if (words->empty()) {
    diag.at(*value, "job.command: must not be empty");
    return;
  }
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < words->size(); ++i) {
    const toml::node& word = *words->get(i);
    if (!word.is_string()) {
      diag.at(word, fmt::format("job.command[{}]: expected a string, got {}", i,
                                type_phrase(word.type())));
    } else if (has_nul(*word.value<std::string>())) {
      diag.at(word, fmt::format("job.command[{}]: contains a NUL byte", i));
    } else {
      argv.push_back(*word.value<std::string>());
    }
  }
  if (argv.size() == words->size()) {
    job.command = std::move(argv);
    job.command_is_shell = false;
  }
}

// Env values may be strings, integers or booleans (written as TOML spells them).
std::optional<std::string> env_value(const toml::node& value) {
  if (const auto* text = value.as_string()) return text->get();
  if (const auto* number = value.as_integer()) return std::to_string(number->get());
  if (const auto* flag = value.as_boolean()) return flag->get() ? "true" : "false";
  return std::nullopt;
}

void read_env(const Section& job_section, JobSpec& job) {
  const toml::node* value = job_section.node("env");
  if (value == nullptr) {
    return;
  }
  if (const auto* table = value->as_table()) {
    job.env = read_env_table(*table, "job.env", job_section.diag());
  } else {
    job_section.wrong_type("env", *value, "a table of NAME = \"value\"");
  }
}

// A variable name, or a name prefix and '*': "NCCL_*".
bool is_env_pattern(std::string_view pattern) {
  if (pattern.ends_with('*')) {
    pattern.remove_suffix(1);
  }
  return is_env_name(pattern);
}

// An array of strings, each element checked by `accept` (which reports).
template <typename Accept>
void read_string_array(const Section& section, std::string_view key, Accept accept) {
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

void read_job(const Section& s, const std::string& origin, JobSpec& job, SourcePlaces& places) {
  if (s.read_string("name", job.name) && job.name.empty()) {
    s.diag().at(*s.node("name"), "job.name: must not be empty");
    job.name = "ddl";
  }
  read_command(s, job);
  s.read_string("workdir", job.workdir);
  if (s.read_string("python", job.python) && job.python.empty()) {
    s.diag().at(*s.node("python"), "job.python: must not be empty");
    job.python = "python3";
  }
  read_env(s, job);
  read_string_array(s, "env_pass", [&](const toml::node& item, const std::string& pattern) {
    if (is_env_pattern(pattern)) {
      job.env_pass.push_back(pattern);
    } else {
      s.diag().at(item, fmt::format("job.env_pass: {} is not a variable name or a NAME_* "
                                    "pattern", quote_input(pattern)));
    }
  });
  if (s.node("frameworks") != nullptr) {
    job.frameworks.clear();
  }
  read_string_array(s, "frameworks", [&](const toml::node& item, const std::string& name) {
    auto found = std::find(framework_names().begin(), framework_names().end(), name);
    if (found == framework_names().end()) {
      s.diag().at(item, "job.frameworks: " + choice_problem(name, framework_names()));
      return;
    }
    auto framework = static_cast<Framework>(found - framework_names().begin());
    if (std::find(job.frameworks.begin(), job.frameworks.end(), framework) ==
        job.frameworks.end()) {
      job.frameworks.push_back(framework);
    }
  });
  Millis timeout{0};
  if (s.read_duration("timeout", timeout, false)) {
    job.timeout = timeout;
  }
  s.read_int("max_restarts", job.max_restarts, 0, INT_MAX);
  s.read_duration("grace", job.grace, true);
  s.read_string("log_dir", job.log_dir);
  s.read_bool("strict_logs", job.strict_logs);
  read_output_keys(s, job, places);
  read_stop(s, job.stop);
  read_team_keys(s, origin, job, places);
}

} // namespace

EnvList read_env_table(const toml::table& table, std::string_view label, Diagnostics& diag) {
  EnvList env;
  // toml++ keeps keys sorted; keep the file's order instead.
  std::vector<std::pair<Position, std::pair<std::string, std::string>>> entries;
  for (auto&& [key, item] : table) {
    std::string name(key.str());
    Position where = position_of(key.source());
    if (!is_env_name(name)) {
      diag.at(where, fmt::format("{}: {} is not a valid variable name "
                                 "([A-Za-z_][A-Za-z0-9_]*)", label, quote_input(name)));
      continue;
    }
    std::optional<std::string> text = env_value(item);
    if (!text) {
      diag.at(item, fmt::format("{}.{}: expected a string, got {}", label, name,
                                type_phrase(item.type())));
    } else if (has_nul(*text)) {
      diag.at(item, fmt::format("{}.{}: value contains a NUL byte", label, name));
    } else {
      entries.push_back({where, {name, *text}});
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  for (auto& entry : entries) {
    env.push_back(std::move(entry.second));
  }
  return env;
}


void read_hosts(const Section& s, const std::string& origin, JobSpec& job, SourcePlaces& places);

void read_sections(const toml::table& root, const std::string& origin, JobSpec& job,
                   SourcePlaces& places, Diagnostics& diag) {
  for (auto&& [key, value] : root) {
    const auto& names = section_names();
    bool known = std::find(names.begin(), names.end(), key.str()) != names.end();
    if (known && !value.is_table()) {
      diag.at(value, fmt::format("{}: expected a table, got {}", key.str(),
                                 type_phrase(value.type())));
    } else if (!known && value.is_table()) {
      std::string near = did_you_mean(key.str(), names);
      diag.at(position_of(key.source()),
              fmt::format("unknown section {}{}", quote_input(key.str()),
                          near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
    } else if (!known) {
      std::string home;
      for (const std::string& section : names) {
        const auto& keys = section_keys(section);
        if (home.empty() && std::find(keys.begin(), keys.end(), key.str()) != keys.end()) {
          home = section;
        }
      }
      diag.at(position_of(key.source()),
              fmt::format("unknown top-level key {}{}", quote_input(key.str()),
                          home.empty() ? "" : fmt::format("; it belongs in [{}]", home)));
    }
  }
  auto table = [&root](std::string_view name) { return root.get_as<toml::table>(name); };

  read_job(Section(table("job"), "job", diag), origin, job, places);
  read_hosts(Section(table("hosts"), "hosts", diag), origin, job, places);

  Section launch(table("launch"), "launch", diag);
  std::string backend;
  if (launch.read_string("backend", backend)) {
    if (auto kind = parse_backend(backend)) {
      job.launch.backend = *kind;
    } else {
      diag.at(*launch.node("backend"), "launch.backend: " + choice_problem(backend, backend_names()));
    }
  }
  int np = 0;
  if (launch.read_int("np", np, 1, k_max_world_size)) {
    job.launch.np.max = np;
  }
  launch.read_bool("bind_gpus", job.launch.bind_gpus);
  read_bind(launch, job);
  read_elastic(launch, job);
  read_placement(Section(table("placement"), "placement", diag), job);

  Section ssh(table("ssh"), "ssh", diag);
  ssh.read_string("user", job.ssh.user);
  int port = 0;
  if (ssh.read_int("port", port, 1, 65535)) {
    job.ssh.port = port;
  }
  ssh.read_string("identity", job.ssh.identity);
  ssh.read_string("config", job.ssh.config);
  ssh.read_string("known_hosts", job.ssh.known_hosts);
  std::string check;
  if (ssh.read_string("host_key_check", check)) {
    static const std::vector<std::string> names = {"yes", "accept-new", "no"};
    auto found = std::find(names.begin(), names.end(), check);
    if (found == names.end()) {
      diag.at(*ssh.node("host_key_check"), "ssh.host_key_check: " + choice_problem(check, names));
    } else {
      job.ssh.host_key_check = static_cast<HostKeyCheck>(found - names.begin());
    }
  }
  ssh.read_duration("connect_timeout", job.ssh.connect_timeout, false);
  ssh.read_int("fanout", job.ssh.fanout, 1, INT_MAX);
  ssh.read_string("remote_ddl", job.ssh.remote_ddl);

  Section k8s(table("kubernetes"), "kubernetes", diag);
  k8s.read_string("namespace", job.kubernetes.namespace_);
  k8s.read_string("selector", job.kubernetes.selector);
  k8s.read_string("container", job.kubernetes.container);
  k8s.read_string("kubectl", job.kubernetes.kubectl);
  k8s.read_string("context", job.kubernetes.context);

  Section slurm(table("slurm"), "slurm", diag);
  read_string_array(slurm, "srun_args", [&](const toml::node&, const std::string& arg) {
    job.slurm.srun_args.push_back(arg);
  });
  if (slurm.read_string("partition", job.slurm.partition) && !job.slurm.partition.empty()) {
    diag.at(*slurm.node("partition"),
            "slurm.partition: ddl does not request allocations; run it inside one "
            "(salloc -p PARTITION ... or sbatch -p PARTITION ...)");
  }

  Section mpirun(table("mpirun"), "mpirun", diag);
  read_string_array(mpirun, "args", [&](const toml::node&, const std::string& arg) {
    job.mpirun.args.push_back(arg);
  });
  std::string flavour;
  if (mpirun.read_string("flavour", flavour)) {
    static const std::vector<std::string> names = {"auto", "openmpi", "mpich"};
    auto found = std::find(names.begin(), names.end(), flavour);
    if (found == names.end()) {
      diag.at(*mpirun.node("flavour"), "mpirun.flavour: " + choice_problem(flavour, names));
    } else {
      job.mpirun.flavour = static_cast<MpiFlavour>(found - names.begin());
    }
  }

  Section mpi(table("mpi"), "mpi", diag);
  if (std::string mpi_launch; mpi.read_string("launch", mpi_launch)) {
    if (auto parsed = parse_mpi_launch(mpi_launch)) {
      job.mpi.launch = *parsed;
    } else {
      diag.at(*mpi.node("launch"), "mpi.launch: " + choice_problem(mpi_launch, mpi_launch_names()));
    }
  }

  Section rdzv(table("rendezvous"), "rendezvous", diag);
  rdzv.read_string("address", job.rendezvous.address);
  rdzv.read_int("port", job.rendezvous.port, 0, 65535);
  rdzv.read_duration("timeout", job.rendezvous.timeout, false);

  Section torch(table("torch"), "torch", diag);
  torch.read_int("master_port", job.torch.master_port, 0, 65535);
  // JAX's coordinator takes master_port + 1 (src/render/frameworks/jax.hpp);
  // refused here, where the key has its place in the file.
  if (uses_framework(job, Framework::jax) && job.torch.master_port == 65535) {
    diag.at(*torch.node("master_port"),
            "torch.master_port: 65535 leaves no port for JAX's coordinator (master_port + 1); "
            "use at most 65534, or 0 for a free one");
  }

  Section tf(table("tensorflow"), "tensorflow", diag);
  tf.read_int("chief", job.tensorflow.chief, 0, 1);
  tf.read_int("ps", job.tensorflow.ps, 0, INT_MAX);
  tf.read_int("evaluator", job.tensorflow.evaluator, 0, 1);
  tf.read_int("port", job.tensorflow.port, 1, 65535);
  if (std::string success; tf.read_string("success", success)) {
    static const std::vector<std::string> names = {"chief", "all"};
    auto found = std::find(names.begin(), names.end(), success);
    if (found == names.end()) {
      diag.at(*tf.node("success"), "tensorflow.success: " + choice_problem(success, names));
    } else {
      job.tensorflow.success = static_cast<TfSuccess>(found - names.begin());
    }
  }

  read_sweep(Section(table("sweep"), "sweep", diag), table("sweep"), job);
  read_watchdog(Section(table("watchdog"), "watchdog", diag), job.watchdog);
  read_container(Section(table("container"), "container", diag), root.get("container"), job);
  read_host_env(root.get("host_env"), job, diag);
}

} // namespace ddl::job_detail
