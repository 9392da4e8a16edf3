// SPDX-License-Identifier: MIT
#pragma once

// The layers of a rank's env that the team sets (issue 31), after [job] env:
// the env file's variables, then the [host_env."PATTERN"] tables that match
// the rank's host (in file order), then -x: the command line wins.

#include <string>
#include <string_view>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"

namespace ddl {

// Whether a [host_env] pattern matches `host`: "label=value" compares its
// label (a glob on the value), anything else is a glob (fnmatch: * ? [..])
// on the host's name.
bool host_env_matches(std::string_view pattern, const Host& host);

// The variables of every [host_env] table matching `host`, a later table
// winning.
EnvList host_env_for(const JobSpec& job, const Host& host);

// Sets env_file's variables, then host_env_for(host), then -x on `env`, each
// replacing an earlier entry of its name.
void add_team_env(EnvList& env, const JobSpec& job, const Host& host);

// The value as ddl prints it (--dry-run, render): a value that came from the
// env file is shown as "<from FILE>", as it may be a secret.
std::string shown_env_value(const JobSpec& job, const std::string& name, const std::string& value);

// What `run --dry-run` prints when [host_env] is set: per plan host, the
// tables that match it and the variables they set there.
std::string host_env_text(const JobSpec& job, const Plan& plan);

} // namespace ddl
