// SPDX-License-Identifier: MIT
// The trial contract (version 1): what `ddl sweep` and each trial, a child
// `ddl run --trial SWEEP_DIR/trial-NNNN/request.json`, tell each other, in
// two files of the trial's folder (man/ddl.1, "TRIAL CONTRACT"):
//   request.json, written by the sweep before each attempt: the job as the
//     sweep read it (its file's text and options), the trial's hosts as
//     typed specs with their GPU ids, np, parameters, env, command, logs,
//     and (optional, over ssh) the socket of the sweep's session broker;
//   result.json, written by the trial at its end: its exit code and reason,
//     times, the hosts it ran on, and its metric with the file it came from.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/job/job.hpp"
#include "src/plan/placement.hpp"
#include "src/plan/plan.hpp"
#include "src/sweep/trials.hpp"
#include "src/util/env.hpp"
#include "src/util/error.hpp"
#include "src/util/json.hpp"

namespace ddl::sweep {

inline constexpr int k_trial_contract_version = 1;
inline constexpr const char* k_request_name = "request.json";
inline constexpr const char* k_result_name = "result.json";

// The job as the sweep read it: the job file's text, and the command-line
// options that shape every trial (-x, --timeout, --max-restarts, --backend,
// a command after --). The host options and --np are not among them: each
// request names its hosts and np.
struct JobSnapshot {
  std::string file;   // the job file's absolute path (for messages and relative paths in it)
  std::string toml;   // its text, as read when the sweep began
  Overrides options;
};

// `base` with the options of `where` that a snapshot leaves out: the host
// options and --np, where trials run.
Overrides with_host_options(Overrides base, const Overrides& where);
// The options of `all` that a snapshot keeps (see JobSnapshot).
Overrides trial_options(const Overrides& all);
// Whether `all` gives any option that a snapshot keeps.
bool has_trial_options(const Overrides& all);

Json snapshot_json(const JobSnapshot& snapshot);
Result<JobSnapshot> snapshot_from_json(const Json& doc);
// The snapshot's job (parsed from its text, as the sweep parsed it) with
// `where` (host options and --np) over it.
Result<JobSpec> snapshot_job(const JobSnapshot& snapshot, const Overrides& where);

// What one trial attempt runs: request.json.
struct TrialRequest {
  int trial = 0;
  int attempt = 0;          // the sweep's attempt of this trial (0 first)
  std::string trial_dir;    // DDL_TRIAL_DIR
  JobSnapshot job;
  std::string backend;      // as the sweep chose it ("ssh")
  std::vector<HostSpec> hosts;  // slots: the trial's ranks there; gpus: those of its slots
  int np = 1;
  std::vector<std::pair<std::string, ParamValue>> parameters;
  EnvList env;              // DDL_TRIAL, DDL_TRIAL_DIR, DDL_PARAM_<NAME>
  std::vector<std::string> command;  // parameters substituted ("/bin/sh", "-c", ... for a string command)
  std::string log_dir;      // the rank logs of this attempt
  std::string result;       // where the trial writes result.json
  // Optional ("" when absent): the unix socket of the sweep's ssh session
  // broker; the trial's ssh channels go through it (backends/ssh/ssh_broker.hpp).
  std::string ssh_broker;
};

Json request_json(const TrialRequest& request);
// Reads request.json; an error (ExitCode::usage) names the file and what is
// wrong with it (another version, a missing or mistyped key).
Result<TrialRequest> read_request(const std::string& path);
// The job a trial runs: the snapshot's, on the request's hosts (typed, GPU
// ids given: no host source, filter or GPU probe again), with its np, env,
// command, log folder and backend.
Result<JobSpec> trial_job(const TrialRequest& request);

// How a trial ended: result.json.
struct TrialResult {
  int trial = 0;
  int attempt = 0;
  int exit_code = 0;
  // The run's summary result (ok, failed, timeout, interrupted,
  // launch_error, rendezvous_timeout, stalled, requeue, log_error), or for
  // ddl's own error before any rank ran: launch_error, usage, interrupted, ...
  std::string reason{};
  std::string error{};          // ddl's own error message; "" when none
  std::string started{};        // ISO 8601 UTC
  std::string ended{};
  double seconds = 0;
  int gang_attempts = 0;        // attempts of the gang ([job] max_restarts); 0 when none started
  Json hosts = Json::array();   // the plan's hosts: spec keys, "address", slots = ranks there
  std::vector<std::string> rank0_logs{};  // rank 0's output of the gang's last attempt
  std::optional<double> metric{};
  std::string metric_source{};  // the file the metric came from
  // The hosts the trial's preflight named, each with why ("preflight_named":
  // [{"host", "why"}], absent when none): the sweep excludes those.
  std::vector<LeftOutHost> preflight_named{};
};

// The reason of a trial that ended with ddl's own error before its run's
// summary: "usage", "launch_error", "interrupted", "timeout", ...
std::string error_reason(const Error& error);
// The plan's hosts as result.json lists them: spec keys, "address", and
// "slots" = the ranks there.
Json plan_hosts_json(const Plan& plan);

Json result_json(const TrialResult& result);
// nullopt when the file is absent or not a version 1 result (a trial that
// was killed before it could write one).
std::optional<TrialResult> read_result(const std::string& path);

// `doc` written to `path` whole (a temporary file renamed over it).
Result<void> write_json_file(const std::string& path, const Json& doc);

// A host spec as the contract writes it: "name", then "user", "port",
// "slots", "labels", "gpus" when set.
Json host_spec_json(const HostSpec& spec);

} // namespace ddl::sweep
