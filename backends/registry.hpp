// SPDX-License-Identifier: MIT
#pragma once

#include <memory>

#include "src/job/job.hpp"
#include "src/launch/backend.hpp"

namespace ddl {

// The backend the job names: the only place that knows every backend.
std::unique_ptr<Backend> make_backend(const JobSpec& job);

} // namespace ddl
