#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside a real Slurm allocation (the test bed), hosts carry partition=P and
# feature.F=true for each ActiveFeature of their node, read with one
# `scontrol -o show node NODELIST` only when [placement] or `ddl hosts` uses
# labels; a [placement] that needs them stops (exit 3) when scontrol fails.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
SLURM_NODE_FEATURES=("a100,ib" "a100,ib" "v100" "")
slurm_up 4

# scontrol that logs each call on its way to the real one (to count calls).
mkdir -p "$t/bin"
real_scontrol=$(command -v scontrol)
printf '#!/bin/sh\necho "$*" >>%s\nexec %s "$@"\n' "$t/scontrol.log" "$real_scontrol" >"$t/bin/scontrol"
chmod +x "$t/bin/scontrol"
salloc_ddl() {
  local args=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  slurm_login env PATH="$t/bin:$PATH" salloc -Q "${args[@]}" "$DDL" "$@"
}

expect_exit 0 salloc_ddl -N4 -p test -- hosts --json
python3 - "$t/out" <<'PY'
import json, sys
labels = {h["name"]: h.get("labels", {}) for h in json.load(open(sys.argv[1]))["hosts"]}
want = {"h1": {"partition": "test", "feature.a100": "true", "feature.ib": "true"},
        "h2": {"partition": "test", "feature.a100": "true", "feature.ib": "true"},
        "h3": {"partition": "test", "feature.v100": "true"},
        "h4": {"partition": "test"}}
assert labels == want, labels
PY
[[ $(wc -l <"$t/scontrol.log") == 1 ]] || { cat "$t/scontrol.log"; fail "not one scontrol call"; }
expect_contains "$t/scontrol.log" "-o -- show node h[1-4]"

# A constraint on a feature: only h1 and h2 get ranks, and ddl hosts says why
# the others get none.
printf '[placement]\nconstraints = { "feature.a100" = "true" }\n' >"$t/a100.toml"
expect_exit 0 salloc_ddl -N4 --ntasks-per-node=2 -- render "$t/a100.toml" --format hostfile
[[ $(cat "$t/out") == $'h1 slots=2\nh2 slots=2' ]] || { cat "$t/out"; fail "feature constraint"; }
expect_exit 0 salloc_ddl -N4 -- hosts "$t/a100.toml"
grep -E '^h3 .*constraint feature.a100=true: no label feature.a100$' "$t/out" >/dev/null || { cat "$t/out"; fail "h3 reason"; }

# A plain launch pays no scontrol call.
: >"$t/scontrol.log"
expect_exit 0 salloc_ddl -N2 -- render --format hostfile
[[ ! -s $t/scontrol.log ]] || { cat "$t/scontrol.log"; fail "scontrol called for a job without labels"; }

# scontrol failing: the constrained job stops with exit 3 and scontrol's
# words, before any rank. The failing scontrol is a TEST DOUBLE printing what
# the real one prints when slurmctld is down (stopping this bed's controller
# would make the real one retry for a minute first).
printf '#!/bin/sh\necho "slurm_load_node error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' >"$t/bin/scontrol"
expect_exit 3 salloc_ddl -N4 -- run "$t/a100.toml" --backend slurm -- echo rank ran
expect_contains "$t/err" "ddl: error: [placement] uses host labels (constraints or order), but the features of the allocation's nodes could not be read: scontrol show node failed: slurm_load_node error: Unable to contact slurm controller (connect failure); run ddl where scontrol works, or take the labels out of [placement]"
expect_not_contains "$t/out" "rank ran"
expect_exit 0 salloc_ddl -N2 -p test -- hosts
expect_contains "$t/err" "ddl: warning: Slurm nodes shown without their features: scontrol show node failed: slurm_load_node error"
expect_exit 0 salloc_ddl -N2 -p test -- hosts --json
python3 -c 'import json,sys; hs=json.load(open(sys.argv[1]))["hosts"]; assert len(hs)==2 and all(h["labels"]=={"partition": "test"} and h["labels_error"].startswith("scontrol show node failed: slurm_load_node error") for h in hs), hs' "$t/out"
slurm_wait_idle
