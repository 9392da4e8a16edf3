// SPDX-License-Identifier: MIT
#include "src/session/trial.hpp"

#include <chrono>

#include "src/session/job_run.hpp"
#include "src/sweep/metric.hpp"
#include "src/sweep/trial_contract.hpp"
#include "src/util/json.hpp"
#include "src/util/log.hpp"
#include "src/util/rank_logs.hpp"
#include "src/util/signals.hpp"

namespace ddl::session {

namespace {

// A trial's job launched; what the run tells of itself goes into `result`.
Result<int> launch_trial(const JobSpec& job, sweep::TrialResult& result) {
  stop::set_timeout(job.timeout);
  RunAsk ask;
  ask.on_summary = [&result](const JobSummary& summary) {
    result.reason = summary.result;
    result.gang_attempts = summary.attempts;
  };
  ask.on_planned = [&result](const Plan& plan) { result.hosts = sweep::plan_hosts_json(plan); };
  ask.on_preflight = [&result](const std::vector<LeftOutHost>& named) { result.preflight_named = named; };
  return JobRun(job, std::move(ask)).run();
}

// How the trial ended: its code or error, rank 0's logs, its metric.
void record_end(const Result<int>& code, const sweep::TrialRequest& request, const JobSpec* job,
                sweep::TrialResult& result) {
  result.exit_code = code ? *code : to_int(code.error().code);
  if (!code) {
    result.error = code.error().message;
    result.reason = result.reason.empty() ? sweep::error_reason(code.error()) : result.reason;
  }
  if (job == nullptr) {
    return;
  }
  if (result.gang_attempts > 0) {
    result.rank0_logs = rank_output_logs(job->log_dir, 0, result.gang_attempts - 1, job->split_logs);
  }
  if (job->sweep && job->sweep->metric) {
    if (auto found = sweep::find_metric(request.trial_dir, result.rank0_logs, job->sweep->metric->name)) {
      result.metric = found->value;
      result.metric_source = found->source;
    }
  }
}

} // namespace

Result<int> run_trial(const std::string& request_path) {
  auto request = sweep::read_request(request_path);
  if (!request) {
    return fail(request.error());
  }
  sweep::TrialResult result{request->trial, request->attempt};
  result.started = event_time_now();
  const auto start = std::chrono::steady_clock::now();
  auto job = sweep::trial_job(*request);
  Result<int> code = job ? launch_trial(*job, result) : Result<int>(fail(job.error()));
  record_end(code, *request, job ? &*job : nullptr, result);
  result.ended = event_time_now();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (auto written = sweep::write_json_file(request->result, sweep::result_json(result)); !written) {
    print_warning(written.error().message);
  }
  return code;
}

} // namespace ddl::session
