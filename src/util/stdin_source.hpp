// SPDX-License-Identifier: MIT
#pragma once

namespace ddl {

// Whether ddl's own stdin can hold no input at all: fd 0 closed, or
// /dev/null (a script's background job, CI, `ddl run ... </dev/null`).
// Then a local rank that would read it (--stdin) gets /dev/null itself, as
// before stdin was forwarded, rather than a pipe that only ever gives EOF.
bool stdin_holds_nothing();

} // namespace ddl
