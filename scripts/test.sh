#!/usr/bin/env bash
# Installs every dependency, builds ddl, and runs the whole test suite: unit and
# end-to-end tests, then the unit tests again under ASan+UBSan (clang) with a
# bounded fuzzing run of the job-file loader. Under CI=true a test that did not
# run (skipped, exit 77) fails the suite (scripts/ctest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
scripts/build.sh
scripts/ctest.sh build --output-on-failure -j2 --timeout 600

werror=OFF; [[ ${CI:-} == true ]] && werror=ON
[[ -f build-asan/CMakeCache.txt ]] || CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja \
  -DCMAKE_BUILD_TYPE=Debug -DDDL_SANITIZE=ON -DDDL_FUZZ=ON -DDDL_WERROR=$werror >/dev/null
cmake --build build-asan --target ddl_unit_tests $(grep -q '^ddl_fuzz_job' <(ninja -C build-asan -t targets all 2>/dev/null | cut -d: -f1) && echo ddl_fuzz_job)
scripts/ctest.sh build-asan --output-on-failure -L 'unit|fuzz' -j2 --timeout 600
