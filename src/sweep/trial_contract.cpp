// SPDX-License-Identifier: MIT
#include "src/sweep/trial_contract.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include <fmt/core.h>

#include "src/job/limits.hpp"
#include "src/sweep/results.hpp"
#include "src/util/file.hpp"
#include "src/util/own_path.hpp"

namespace ddl::sweep {

namespace {

// A request holds a job file's text, so its cap is the job file's and some.
constexpr std::size_t k_max_request_bytes = k_max_job_file_bytes + (std::size_t{1} << 20);
constexpr std::size_t k_max_result_bytes = std::size_t{1} << 20;

// What is wrong with a document of the contract: thrown while reading it.
struct BadDocument : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const Json& member(const Json& doc, const char* key) {
  auto found = doc.find(key);
  if (found == doc.end()) {
    throw BadDocument(fmt::format("no \"{}\"", key));
  }
  return *found;
}

template <typename T> T value_of(const Json& doc, const char* key) {
  try {
    return member(doc, key).get<T>();
  } catch (const nlohmann::json::exception& error) {
    throw BadDocument(fmt::format("\"{}\": {}", key, error.what()));
  }
}

template <typename T> void read_optional(const Json& doc, const char* key, std::optional<T>& out) {
  if (doc.contains(key)) {
    out = value_of<T>(doc, key);
  }
}

template <typename T> void write_optional(Json& doc, const char* key, const std::optional<T>& value) {
  if (value) {
    doc[key] = *value;
  }
}

Json env_json(const EnvList& env) {
  Json out = Json::object();
  for (const auto& [name, value] : env) out[name] = value;
  return out;
}

EnvList env_from(const Json& doc) {
  if (!doc.is_object()) {
    throw BadDocument("\"env\": not an object");
  }
  EnvList env;
  for (const auto& [name, value] : doc.items()) {
    if (!value.is_string()) {
      throw BadDocument(fmt::format("\"env\": {}: not a string", name));
    }
    env.emplace_back(name, value.get<std::string>());
  }
  return env;
}

ParamValue param_from(const Json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) return value.get<long long>();
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return value.get<std::string>();
  throw BadDocument("\"parameters\": a value is not a number, string or boolean");
}

// The options a snapshot keeps, by their long names.
constexpr std::array<std::pair<const char*, std::optional<std::string> Overrides::*>, 6> k_text_options{{
    {"backend", &Overrides::backend},
    {"ssh_config", &Overrides::ssh_config},
    {"timeout", &Overrides::timeout},
    {"log_dir", &Overrides::log_dir},
    {"output_ranks", &Overrides::output_ranks},
    {"prefix", &Overrides::prefix},
}};
constexpr std::array<std::pair<const char*, bool Overrides::*>, 6> k_flag_options{{
    {"strict_logs", &Overrides::strict_logs},
    {"timestamps", &Overrides::timestamps},
    {"split_logs", &Overrides::split_logs},
    {"fold", &Overrides::fold},
    {"preflight", &Overrides::preflight},
    {"no_preflight", &Overrides::no_preflight},
}};
constexpr std::array<std::pair<const char*, std::vector<std::string> Overrides::*>, 2> k_list_options{{
    {"env", &Overrides::env},
    {"command", &Overrides::command},
}};

// The set members of the options a snapshot keeps.
Json options_json(const Overrides& o) {
  Json doc = Json::object();
  for (const auto& [key, member] : k_text_options) write_optional(doc, key, o.*member);
  write_optional(doc, "max_restarts", o.max_restarts);
  for (const auto& [key, member] : k_flag_options) {
    if (o.*member) doc[key] = true;
  }
  for (const auto& [key, member] : k_list_options) {
    if (!(o.*member).empty()) doc[key] = o.*member;
  }
  return doc;
}

Overrides options_from(const Json& doc) {
  if (!doc.is_object()) {
    throw BadDocument("\"options\": not an object");
  }
  Overrides o;
  for (const auto& [key, member] : k_text_options) read_optional(doc, key, o.*member);
  read_optional(doc, "max_restarts", o.max_restarts);
  for (const auto& [key, member] : k_flag_options) {
    std::optional<bool> on;
    read_optional(doc, key, on);
    o.*member = on.value_or(false);
  }
  for (const auto& [key, member] : k_list_options) {
    if (doc.contains(key)) o.*member = value_of<std::vector<std::string>>(doc, key);
  }
  return o;
}

JobSnapshot snapshot_from(const Json& doc) {
  return JobSnapshot{value_of<std::string>(doc, "file"), value_of<std::string>(doc, "toml"),
                     options_from(member(doc, "options"))};
}

HostSpec host_spec_from(const Json& doc) {
  HostSpec spec{value_of<std::string>(doc, "name"), std::nullopt};
  read_optional(doc, "slots", spec.slots);
  std::optional<std::string> user;
  read_optional(doc, "user", user);
  spec.user = user.value_or("");
  read_optional(doc, "port", spec.port);
  if (doc.contains("labels")) {
    for (const auto& [key, value] : value_of<std::map<std::string, std::string>>(doc, "labels")) {
      spec.labels.emplace(key, value);
    }
  }
  if (doc.contains("gpus")) spec.gpus = value_of<std::vector<int>>(doc, "gpus");
  return spec;
}

void check_version(const Json& doc) {
  if (!doc.is_object()) {
    throw BadDocument("not a JSON object");
  }
  const int version = value_of<int>(doc, "version");
  if (version != k_trial_contract_version) {
    throw BadDocument(fmt::format("version {}; this ddl reads version {}", version, k_trial_contract_version));
  }
}

TrialRequest request_from(const Json& doc) {
  check_version(doc);
  TrialRequest request;
  request.trial = value_of<int>(doc, "trial");
  request.attempt = value_of<int>(doc, "attempt");
  request.trial_dir = value_of<std::string>(doc, "trial_dir");
  request.job = snapshot_from(member(doc, "job"));
  request.backend = value_of<std::string>(doc, "backend");
  for (const Json& host : member(doc, "hosts")) request.hosts.push_back(host_spec_from(host));
  request.np = value_of<int>(doc, "np");
  for (const auto& [name, value] : member(doc, "parameters").items()) {
    request.parameters.emplace_back(name, param_from(value));
  }
  request.env = env_from(member(doc, "env"));
  request.command = value_of<std::vector<std::string>>(doc, "command");
  request.log_dir = value_of<std::string>(doc, "log_dir");
  request.result = value_of<std::string>(doc, "result");
  if (doc.contains("ssh_broker")) request.ssh_broker = value_of<std::string>(doc, "ssh_broker");
  if (request.hosts.empty() || request.np < 1 || request.command.empty()) {
    throw BadDocument("no hosts, np below 1 or no command");
  }
  return request;
}

// `request.env` over `env`, as -x sets a variable: an earlier value is replaced.
void set_env(EnvList& env, const EnvList& over) {
  for (const auto& item : over) {
    std::erase_if(env, [&item](const auto& entry) { return entry.first == item.first; });
    env.push_back(item);
  }
}

} // namespace

Overrides with_host_options(Overrides base, const Overrides& where) {
  base.hosts = where.hosts;
  base.hostfile = where.hostfile;
  base.slurm = where.slurm;
  base.include = where.include;
  base.exclude = where.exclude;
  base.np = where.np;
  return base;
}

Overrides trial_options(const Overrides& all) { return with_host_options(all, Overrides{}); }

bool has_trial_options(const Overrides& all) { return !options_json(trial_options(all)).empty(); }

Json snapshot_json(const JobSnapshot& snapshot) {
  return Json{{"file", snapshot.file}, {"toml", snapshot.toml}, {"options", options_json(snapshot.options)}};
}

Result<JobSnapshot> snapshot_from_json(const Json& doc) {
  try {
    return snapshot_from(doc);
  } catch (const BadDocument& error) {
    return fail(ExitCode::usage, fmt::format("the job snapshot: {}", error.what()));
  }
}

Result<JobSpec> snapshot_job(const JobSnapshot& snapshot, const Overrides& where) {
  return parse_job(snapshot.toml, snapshot.file, with_host_options(snapshot.options, where));
}

Json host_spec_json(const HostSpec& spec) {
  Json doc{{"name", spec.name}};
  if (!spec.user.empty()) doc["user"] = spec.user;
  write_optional(doc, "port", spec.port);
  write_optional(doc, "slots", spec.slots);
  if (!spec.labels.empty()) doc["labels"] = Json(spec.labels);
  if (!spec.gpus.empty()) doc["gpus"] = spec.gpus;
  return doc;
}

Json request_json(const TrialRequest& request) {
  Json hosts = Json::array();
  for (const HostSpec& spec : request.hosts) hosts.push_back(host_spec_json(spec));
  Json parameters = Json::object();
  for (const auto& [name, value] : request.parameters) parameters[name] = param_json(value);
  Json doc{{"version", k_trial_contract_version},
              {"trial", request.trial},
              {"attempt", request.attempt},
              {"trial_dir", request.trial_dir},
              {"job", snapshot_json(request.job)},
              {"backend", request.backend},
              {"hosts", std::move(hosts)},
              {"np", request.np},
              {"parameters", std::move(parameters)},
              {"env", env_json(request.env)},
              {"command", request.command},
              {"log_dir", request.log_dir},
              {"result", request.result}};
  if (!request.ssh_broker.empty()) doc["ssh_broker"] = request.ssh_broker;
  return doc;
}

Result<TrialRequest> read_request(const std::string& path) {
  // A request says what runs, as this user: only from a folder no one else can change.
  const std::size_t slash = path.rfind('/');
  if (auto own = own_folder(slash == std::string::npos ? "." : path.substr(0, slash + (slash == 0)), "trial folder",
                            false);
      !own) {
    return fail(own.error());
  }
  auto file = read_own_file(path, "trial request", k_max_request_bytes);
  if (!file && file.error().code == ExitCode::usage) {
    return fail(file.error());
  }
  if (!file) {
    return fail(ExitCode::usage, fmt::format("{}: cannot read the trial request: {}", path, file.error().message));
  }
  Json doc = Json::parse(*file, nullptr, false);
  try {
    if (doc.is_discarded()) {
      throw BadDocument("not JSON");
    }
    return request_from(doc);
  } catch (const BadDocument& error) {
    return fail(ExitCode::usage, fmt::format("{}: not a trial request of version {}: {}", path,
                                             k_trial_contract_version, error.what()));
  }
}

Result<JobSpec> trial_job(const TrialRequest& request) {
  auto job = snapshot_job(request.job, {});
  if (!job) {
    return job;
  }
  auto backend = parse_backend(request.backend);
  if (!backend) {
    return fail(ExitCode::usage, fmt::format("{}: backend '{}' is not one ddl knows", request.result,
                                             request.backend));
  }
  job->launch.backend = *backend;
  job->hosts = HostsSection{};
  job->hosts.list = request.hosts;
  job->hosts.slurm = SlurmHosts::off;
  job->launch.np.max = request.np;
  job->command = request.command;
  job->command_is_shell = false;
  job->ssh.broker = request.ssh_broker;
  set_env(job->env, request.env);
  job->log_dir = request.log_dir;
  return job;
}

std::string error_reason(const Error& error) {
  switch (error.code) {
  case ExitCode::usage: return "usage";
  case ExitCode::rendezvous_timeout: return "rendezvous_timeout";
  case ExitCode::stalled: return "stalled";
  case ExitCode::timeout: return "timeout";
  case ExitCode::interrupted:
  case ExitCode::terminated: return "interrupted";
  case ExitCode::ok:
  case ExitCode::launch: break;
  }
  return "launch_error";
}

Json plan_hosts_json(const Plan& plan) {
  std::vector<int> ranks(plan.hosts.size(), 0);
  for (const RankSlot& rank : plan.ranks) ++ranks.at(rank.host_index);
  Json hosts = Json::array();
  for (std::size_t h = 0; h < plan.hosts.size(); ++h) {
    HostSpec spec = host_spec_of(plan.hosts[h]);
    spec.slots = ranks[h];
    Json host = host_spec_json(spec);
    host["address"] = plan.hosts[h].address;
    hosts.push_back(std::move(host));
  }
  return hosts;
}

Json result_json(const TrialResult& result) {
  Json doc{{"version", k_trial_contract_version},
           {"trial", result.trial},
           {"attempt", result.attempt},
           {"exit_code", result.exit_code},
           {"reason", result.reason},
           {"error", result.error.empty() ? Json(nullptr) : Json(result.error)},
           {"started", result.started},
           {"ended", result.ended},
           {"seconds", result.seconds},
           {"gang_attempts", result.gang_attempts},
           {"hosts", result.hosts},
           {"rank0_logs", result.rank0_logs}};
  doc["metric"] = result.metric ? Json{{"value", *result.metric}, {"source", result.metric_source}} : Json(nullptr);
  if (!result.preflight_named.empty()) {
    Json named = Json::array();
    for (const LeftOutHost& host : result.preflight_named) {
      named.push_back(Json{{"host", host.name}, {"why", host.why}});
    }
    doc["preflight_named"] = std::move(named);
  }
  return doc;
}

std::optional<TrialResult> read_result(const std::string& path) {
  auto file = read_own_file(path, "trial result", k_max_result_bytes);
  if (!file) {
    return std::nullopt;
  }
  Json doc = Json::parse(*file, nullptr, false);
  try {
    check_version(doc);
    TrialResult result;
    result.trial = value_of<int>(doc, "trial");
    result.attempt = value_of<int>(doc, "attempt");
    result.exit_code = value_of<int>(doc, "exit_code");
    result.reason = value_of<std::string>(doc, "reason");
    result.seconds = value_of<double>(doc, "seconds");
    result.gang_attempts = value_of<int>(doc, "gang_attempts");
    const Json& metric = member(doc, "metric");
    if (metric.is_object()) {
      result.metric = value_of<double>(metric, "value");
      result.metric_source = value_of<std::string>(metric, "source");
    }
    if (doc.contains("preflight_named")) {
      for (const Json& named : member(doc, "preflight_named")) {
        result.preflight_named.push_back({value_of<std::string>(named, "host"), value_of<std::string>(named, "why")});
      }
    }
    return result;
  } catch (const BadDocument&) {
    return std::nullopt;
  }
}

Result<void> write_json_file(const std::string& path, const Json& doc) {
  const std::string text = to_json_text(doc, JsonStyle::spaced) + "\n";
  const std::string temporary = path + ".tmp";
  auto problem = [&](const std::string& what) {
    return fail(ExitCode::launch, fmt::format("cannot write {}: {}: {}", path, what, std::strerror(errno)));
  };
  auto opened = open_own_file(temporary, O_WRONLY | O_CREAT | O_TRUNC, "sweep file");
  if (!opened) {
    return fail(opened.error());
  }
  const int fd = *opened;
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      ::close(fd);
      return problem("write");
    }
    done += static_cast<std::size_t>(wrote);
  }
  if (::close(fd) != 0) {
    return problem("close");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return problem("rename");
  }
  return {};
}

} // namespace ddl::sweep
