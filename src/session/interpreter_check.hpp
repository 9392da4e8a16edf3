// SPDX-License-Identifier: MIT
#pragma once

// Which Python a personality's ranks run (issue 41): `python3` from ddl's
// PATH unless --python or [job] python names one. Where that Python cannot
// import the framework the launcher needs (torchrun: torch) and another
// Python on this machine can, ddl says so before starting, and how to pick
// it. A rank that then dies of "No module named 'X'" is answered in the
// failure summary (src/launch/report: its interpreter).

#include <string>

#include "src/job/job.hpp"

namespace ddl::session {

// Warns (one line) when job.command[0] is a Python that cannot import
// `module` and another Python here can (PATH's python3 files, then
// /usr/bin/python3, /usr/local/bin/python3).
void warn_interpreter_without(const JobSpec& job, const std::string& module);

} // namespace ddl::session
