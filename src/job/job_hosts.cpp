// SPDX-License-Identifier: MIT
// [hosts], the command-line overrides, and the host-source file checks.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/job/job_host_filter.hpp"
#include "src/job/job_reader.hpp"

namespace ddl::job_detail {

// Files named in the job file are relative to the job file's directory, and a
// relative path always holds a '/', so that running it never searches PATH.
std::string relative_to_job(const std::string& path, const std::string& origin) {
  if (path.starts_with("~/")) {
    if (const char* home = std::getenv("HOME")) {
      return std::string(home) + path.substr(1);
    }
  }
  if (path.empty() || path.starts_with('/')) {
    return path;
  }
  std::filesystem::path dir = std::filesystem::path(origin).parent_path();
  if (dir.empty()) {
    return path.find('/') == std::string::npos ? "./" + path : path;
  }
  return (dir / path).string();
}

// A path key that must not be empty; returns its place when read.
Position read_path(const Section& s, std::string_view key, const std::string& origin,
                   std::string& out) {
  std::string path;
  if (!s.read_string(key, path)) {
    return {};
  }
  if (path.empty()) {
    s.diag().at(*s.node(key), fmt::format("{}: must not be empty", s.label(key)));
    return {};
  }
  out = relative_to_job(path, origin);
  return position_of(s.node(key)->source());
}

namespace {

constexpr std::string_view k_sources = "list, hostfile, slurm, discovery_script";

// One element of [hosts] list: a hostlist spec; reports its problems.
void read_host_spec(const Section& s, const toml::node& item, std::string_view label,
                    JobSpec& job) {
  const auto* spec = item.as_string();
  if (spec == nullptr) {
    s.diag().at(item, fmt::format("{}: expected a string, got {}", label,
                                  type_phrase(item.type())));
    return;
  }
  auto hosts = expand_checked_hosts(spec->get());
  if (!hosts) {
    s.diag().at(item, fmt::format("hosts.list: {}", hosts.error().message));
    return;
  }
  job.hosts.list.insert(job.hosts.list.end(), hosts->begin(), hosts->end());
}

void read_list(const Section& s, JobSpec& job) {
  const toml::node* value = s.node("list");
  if (value == nullptr) {
    return;
  }
  if (value->is_string()) {
    read_host_spec(s, *value, "hosts.list", job);
    return;
  }
  const auto* items = value->as_array();
  if (items == nullptr) {
    s.wrong_type("list", *value, "an array of strings");
    return;
  }
  if (items->empty()) {
    s.diag().at(*value, "hosts.list: must not be empty");
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    read_host_spec(s, *items->get(i), fmt::format("hosts.list[{}]", i), job);
  }
}

void read_slots(const Section& s, JobSpec& job) {
  const toml::node* value = s.node("slots");
  if (value == nullptr) {
    return;
  }
  if (const auto* text = value->as_string()) {
    if (text->get() == "gpus") {
      job.hosts.slots_from_gpus = true;
    } else {
      s.diag().at(*value, fmt::format("hosts.slots: expected an integer or \"gpus\", got {}",
                                      quote_input(text->get())));
    }
    return;
  }
  if (!value->is_integer()) {
    s.wrong_type("slots", *value, "an integer or \"gpus\"");
    return;
  }
  int slots = 0;
  if (s.read_int("slots", slots, 1, k_max_world_size)) {
    job.hosts.slots = slots;
  }
}

std::string errno_text(int error) { return std::generic_category().message(error); }

// O_NONBLOCK: a FIFO with no writer must not block the check.
std::optional<std::string> hostfile_problem(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return fmt::format("cannot read {}: {}", quote_input(path), errno_text(errno));
  }
  struct stat info {};
  bool is_dir = ::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode);
  ::close(fd);
  if (is_dir) {
    return fmt::format("{} is a directory", quote_input(path));
  }
  return std::nullopt;
}

std::optional<std::string> script_problem(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return fmt::format("cannot run {}: {}", quote_input(path), errno_text(errno));
  }
  if (S_ISDIR(info.st_mode)) {
    return fmt::format("{} is a directory", quote_input(path));
  }
  if (::access(path.c_str(), X_OK) != 0) {
    return fmt::format("{} is not executable", quote_input(path));
  }
  return std::nullopt;
}

} // namespace

void read_hosts(const SectionInput& in) {
  const Section s = in.keys();
  JobSpec& job = in.job;
  std::vector<std::pair<Position, std::string>> sources;
  for (std::string_view key : {"list", "hostfile", "slurm", "discovery_script"}) {
    const toml::node* value = s.node(key);
    if (value != nullptr && value->value_or(true)) {
      sources.emplace_back(position_of(value->source()), std::string(key));
    }
  }
  std::sort(sources.begin(), sources.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  for (std::size_t i = 1; i < sources.size(); ++i) {
    s.diag().at(sources[i].first,
                fmt::format("hosts.{}: conflicts with hosts.{}; give only one of {}",
                            sources[i].second, sources[0].second, k_sources));
  }
  read_list(s, job);
  in.places.hostfile = read_path(s, "hostfile", in.origin, job.hosts.hostfile);
  if (bool slurm = false; s.read_bool("slurm", slurm)) {
    job.hosts.slurm = slurm ? SlurmHosts::on : SlurmHosts::off;
  }
  in.places.discovery_script = read_path(s, "discovery_script", in.origin, job.hosts.discovery_script);
  s.read_duration("discovery_timeout", job.hosts.discovery_timeout, false);
  read_slots(s, job);
}

namespace {

void apply_host_overrides(const Overrides& o, JobSpec& job, SourcePlaces& places,
                          Diagnostics& diag) {
  if (o.hosts.empty() && !o.hostfile && !o.slurm) {
    return;
  }
  if (!o.hosts.empty() && o.hostfile) {
    diag.option("--hostfile: cannot be combined with --hosts");
  }
  if (o.slurm && (!o.hosts.empty() || o.hostfile)) {
    diag.option(fmt::format("--slurm: cannot be combined with {}", o.hosts.empty() ? "--hostfile" : "--hosts"));
  }
  job.hosts.list.clear();
  for (const std::string& spec : o.hosts) {
    if (auto hosts = expand_checked_hosts(spec); !hosts) {
      diag.option("--hosts: " + hosts.error().message);
    } else {
      job.hosts.list.insert(job.hosts.list.end(), hosts->begin(), hosts->end());
    }
  }
  if (o.hostfile && o.hostfile->empty()) {
    diag.option("--hostfile: must not be empty");
  }
  job.hosts.hostfile = o.hosts.empty() ? o.hostfile.value_or("") : "";
  job.hosts.slurm = o.slurm ? SlurmHosts::on : SlurmHosts::off;
  job.hosts.discovery_script.clear();
  places = SourcePlaces{};
}

// --include / --exclude: checked here, applied to the hosts once they are known.
void apply_filter_overrides(const Overrides& o, JobSpec& job, Diagnostics& diag) {
  if (o.include && o.exclude) {
    diag.option("--exclude: cannot be combined with --include");
  }
  for (const auto& [flag, text, out] : {std::tuple{"--include", &o.include, &job.hosts.include},
                                        std::tuple{"--exclude", &o.exclude, &job.hosts.exclude}}) {
    if (!*text) {
      continue;
    }
    if (auto parsed = parse_host_filter(**text); !parsed) {
      diag.option(fmt::format("{}: {}", flag, parsed.error().message));
    } else {
      *out = **text;
    }
  }
}

void apply_env_override(const std::string& assignment, JobSpec& job, Diagnostics& diag) {
  std::size_t equals = assignment.find('=');
  if (equals == std::string::npos) {
    diag.option(fmt::format("--env: {} is not NAME=VALUE", quote_input(assignment)));
    return;
  }
  std::string name = assignment.substr(0, equals);
  if (!is_env_name(name)) {
    diag.option(fmt::format("--env: {} is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)",
                            quote_input(name)));
    return;
  }
  std::string value = assignment.substr(equals + 1);
  auto existing = std::find_if(job.env.begin(), job.env.end(),
                               [&](const auto& entry) { return entry.first == name; });
  if (existing != job.env.end()) {
    existing->second = value;
  } else {
    job.env.emplace_back(name, value);
  }
  std::erase_if(job.env_cli, [&](const auto& entry) { return entry.first == name; });
  job.env_cli.emplace_back(std::move(name), std::move(value));
}

} // namespace

void apply_overrides(const Overrides& o, JobSpec& job, SourcePlaces& places, Diagnostics& diag) {
  apply_host_overrides(o, job, places, diag);
  apply_filter_overrides(o, job, diag);
  if (o.backend) {
    if (auto kind = parse_backend(*o.backend)) {
      job.launch.backend = *kind;
    } else {
      diag.option("--backend: " + choice_problem(*o.backend, backend_names()));
    }
  }
  if (o.mpi) {
    if (auto launch = parse_mpi_launch(*o.mpi)) {
      job.mpi.launch = *launch;
    } else {
      diag.option("--mpi: " + choice_problem(*o.mpi, mpi_launch_names()));
    }
  }
  if (o.np) {
    apply_np_range(*o.np, job, diag);
  }
  if (o.preflight && o.no_preflight) {
    diag.option("--preflight and --no-preflight: give one");
  } else if (o.preflight || o.no_preflight) {
    job.preflight.enabled = o.preflight;
    job.preflight.enabled_said = true;
  }
  if (o.timeout) {
    auto timeout = parse_duration(*o.timeout);
    if (!timeout) {
      diag.option("--timeout: " + duration_problem(*o.timeout));
    } else if (timeout->count() == 0) {
      diag.option("--timeout: must be longer than 0");
    } else {
      job.timeout = *timeout;
    }
  }
  if (o.max_restarts) {
    if (*o.max_restarts < 0) {
      diag.option("--max-restarts: must be at least 0");
    } else {
      job.max_restarts = *o.max_restarts;
    }
  }
  if (o.log_dir) {
    job.log_dir = *o.log_dir;
  }
  if (o.name) {
    if (o.name->empty()) {
      diag.option("--name: must not be empty");
    } else {
      job.name = *o.name;
    }
  }
  if (o.ssh_config) {
    if (o.ssh_config->empty()) {
      diag.option("--ssh-config: must not be empty (\"none\" skips the OpenSSH config)");
    } else if (auto problem = *o.ssh_config == "none" ? std::nullopt : hostfile_problem(*o.ssh_config)) {
      diag.option("--ssh-config: " + *problem);  // as ssh -F: a file named on the command line must be there
    } else {
      job.ssh.config = *o.ssh_config;
    }
  }
  if (o.strict_logs) {
    job.strict_logs = true;
  }
  for (const std::string& assignment : o.env) {
    apply_env_override(assignment, job, diag);
  }
  if (!o.command.empty()) {
    job.command = o.command;
    job.command_is_shell = false;
  }
}

void check_source_files(const JobSpec& job, const SourcePlaces& places, Diagnostics& diag) {
  auto report = [&diag](Position where, std::string_view key, std::string_view flag,
                        const std::string& problem) {
    if (where.line != 0) {
      diag.at(where, fmt::format("hosts.{}: {}", key, problem));
    } else {
      diag.option(fmt::format("{}: {}", flag, problem));
    }
  };
  if (!job.hosts.hostfile.empty()) {
    if (auto problem = hostfile_problem(job.hosts.hostfile)) {
      report(places.hostfile, "hostfile", "--hostfile", *problem);
    }
  }
  if (!job.hosts.discovery_script.empty()) {
    if (auto problem = script_problem(job.hosts.discovery_script)) {
      report(places.discovery_script, "discovery_script", "discovery_script", *problem);
    }
  }
}

} // namespace ddl::job_detail
