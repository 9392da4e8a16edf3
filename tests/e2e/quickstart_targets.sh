#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/quickstart.sh builds only what the quick start runs (the ddl
# target), not the unit tests a newcomer would wait for and not run (issue
# 41); scripts/build.sh alone still builds everything. cmake, deps.sh and the
# built ddl are doubles here that record what they were asked.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
mkdir -p "$t/tree/scripts" "$t/tree/build" "$t/bin"
cp "$DDL_SOURCE_DIR/scripts/quickstart.sh" "$DDL_SOURCE_DIR/scripts/build.sh" "$t/tree/scripts/"
printf '#!/bin/sh\necho "deps $*" >>"%s/log"\n' "$t" >"$t/tree/scripts/deps.sh"
printf '#!/bin/sh\necho "cmake $*" >>"%s/log"\n' "$t" >"$t/bin/cmake"
printf '#!/bin/sh\necho "ddl $*" >>"%s/log"\n' "$t" >"$t/tree/build/ddl"
touch "$t/tree/build/CMakeCache.txt"
chmod +x "$t/tree/scripts/"*.sh "$t/bin/cmake" "$t/tree/build/ddl"

expect_exit 0 env PATH="$t/bin:$PATH" "$t/tree/scripts/quickstart.sh"
[[ $(cat "$t/log") == $'deps build\ncmake --build build --target ddl\nddl run examples/hello.toml' ]] ||
  fail "quickstart.sh ran: $(cat "$t/log")"
rm "$t/log"
expect_exit 0 env PATH="$t/bin:$PATH" "$t/tree/scripts/build.sh"
[[ $(cat "$t/log") == "cmake --build build" ]] || fail "build.sh ran: $(cat "$t/log")"
echo PASS
