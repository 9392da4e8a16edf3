// SPDX-License-Identifier: MIT
#pragma once

// The plan as --dry-run and `ddl render` show it: a table, or JSON.

#include <functional>
#include <string>
#include <string_view>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render_env.hpp"

namespace ddl {

// The plan as a table (what --dry-run and `render --format plan` print),
// handed to `write` piece by piece: 100k ranks make tens of MB of text.
void write_plan_table(const JobSpec& job, const Plan& plan, const LaunchContext& ctx,
                      const std::function<void(std::string_view)>& write);
std::string plan_table(const JobSpec& job, const Plan& plan, const LaunchContext& ctx);

// The whole plan as the JSON of DESIGN.md ("render --format json").
std::string plan_json(const JobSpec& job, const Plan& plan, const LaunchContext& ctx);

} // namespace ddl
