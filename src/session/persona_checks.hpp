// SPDX-License-Identifier: MIT
#pragma once

// A personality's part of a run (`ddl torchrun|mpirun|horovodrun|deepspeed`,
// PRRTE's schizo): its meanings applied to the job as it is read, then,
// once the job is planned, its checks asked (JobRun's pass "personality
// checks"), which answer with the job to launch.

#include <string_view>

#include "src/job/job.hpp"
#include "src/persona/persona.hpp"
#include "src/session/job_run.hpp"

namespace ddl::session {

// The job a personality's command line reads: `job` (the job file with
// ddl's own options) with the peer's meanings applied (launch.job_edits),
// its warnings said; it must have a command. Where the personality's ranks
// need a Python module (torchrun: torch, deepspeed: deepspeed) that the
// job's Python cannot import while another Python here can, a warning.
Result<JobSpec> persona_job(JobSpec job, const persona::Launch& launch, std::string_view persona_name);

// The personality's checks and edits that need the plan (launch.plan_edits),
// asked on the planned job: the job they answer with.
PersonaCheck persona_check(const persona::Launch& launch);

} // namespace ddl::session
