#!/usr/bin/env bash
# Installs the build dependencies, builds ddl and runs the example job on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
scripts/build.sh ddl  # only what the quick start runs: not the unit tests
build/ddl run examples/hello.toml
