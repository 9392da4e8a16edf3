#!/usr/bin/env bash
# Configures and builds ddl into build/ (reused when already configured): every
# target, or only the TARGETs named (scripts/build.sh ddl).
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF; [[ ${CI:-} == true ]] && werror=ON
[[ -f build/CMakeCache.txt ]] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDL_WERROR=$werror >/dev/null
cmake --build build ${1:+--target "$@"}
