#!/usr/bin/env bash
# scripts/ctest.sh, which scripts/test.sh (and so CI) runs the suite with:
# ctest counts a skipped test (exit 77) as "Not Run" and exits 0; under
# CI=true that fails the run and names the test, elsewhere the run passes.
# Checked on a real ctest project of two tests. (issue 27, item 15)
source "$(dirname "$0")/common.inc"
have cmake cmake || skip "cmake is not installed"

mkdir "$t/proj"
cat >"$t/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(skips NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME skips-for-want-of-a-tool COMMAND sh -c "echo 'SKIP: a tool is missing'; exit 77")
set_tests_properties(skips-for-want-of-a-tool PROPERTIES SKIP_RETURN_CODE 77)
CMAKE
cmake -S "$t/proj" -B "$t/build" >/dev/null

expect_exit 0 env -u CI "$DDL_SOURCE_DIR/scripts/ctest.sh" "$t/build"
expect_contains "$t/out" "skips-for-want-of-a-tool (Skipped)"
expect_exit 1 env CI=true "$DDL_SOURCE_DIR/scripts/ctest.sh" "$t/build"
expect_contains "$t/err" "ddl CI: every test must run here (CI=true); these did not:"
expect_contains "$t/err" "skips-for-want-of-a-tool (Skipped)"

# Nothing skipped: CI passes; a failure still fails.
sed -i 's/exit 77/exit 0/' "$t/proj/CMakeLists.txt"
cmake -S "$t/proj" -B "$t/build" >/dev/null
expect_exit 0 env CI=true "$DDL_SOURCE_DIR/scripts/ctest.sh" "$t/build"
sed -i 's/COMMAND true/COMMAND false/' "$t/proj/CMakeLists.txt"
cmake -S "$t/proj" -B "$t/build" >/dev/null
expect_exit 8 env CI=true "$DDL_SOURCE_DIR/scripts/ctest.sh" "$t/build"
echo ok
