#!/usr/bin/env bash
# Runs the job-file fuzzer for a bounded time on a scratch copy of the corpus
# (so that new inputs it finds do not land in the source tree).
# Usage: run_fuzz.sh FUZZER CORPUS_DIR DICT SECONDS
set -euo pipefail
fuzzer=$1 corpus=$2 dict=$3 seconds=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/ddl-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"
cp "$corpus"/* "$work/corpus/"
timeout $((seconds + 60)) "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -dict="$dict" -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
  "$work/corpus"
