// SPDX-License-Identifier: MIT
#pragma once

// One attempt of a sweep's trial (`ddl run --trial REQUEST`): the job of its
// request.json launched through a JobRun as `ddl run` launches, its
// result.json written at the end, whatever the end
// (src/sweep/trial_contract.hpp).

#include <string>

#include "src/util/error.hpp"

namespace ddl::session {

// The trial's exit code, or ddl's own error (also in result.json).
Result<int> run_trial(const std::string& request_path);

} // namespace ddl::session
