#!/usr/bin/env bash
# ddl sweep: a host on which every trial fails is excluded (with the reason
# shown and journaled), its trials are retried on other hosts, and the sweep
# finishes with every trial ok.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 3
job=$t/bad.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<'TOML'
[job]
command = 'if [ "$(hostname)" = h3 ]; then echo "broken GPU" >&2; exit 7; fi; sleep 0.3; echo "score: {x}"'
[sweep]
metric = { name = "score", goal = "max" }
retries = 2
[sweep.parameters]
x = [1, 2, 3, 4, 5, 6, 7, 8]
TOML
expect_exit 0 ddl_ssh sweep "$job" -H "$(netns_hostspec 1)" --backend ssh --dir "$t/s"
expect_contains "$t/err" "ddl: warning: host ${NETNS_ADDRS[2]} excluded for the rest of the sweep: 2 trials failed there in a row (trial"
expect_contains "$t/err" ": exit code 7"
expect_contains "$t/out" "excluded: ${NETNS_ADDRS[2]}: 2 trials failed there in a row"
read -r trial x score _ < <(sed -n 2p "$t/out")
[[ "$trial $x $score" == "7 8 8" ]] || fail "best row: $(sed -n 2p "$t/out")"
[[ $(grep -c '"event":"excluded"' "$t/s/journal.jsonl") == 1 ]] || fail "expected one exclusion in the journal"
# After the exclusion no trial started there.
python3 - "$t/s/journal.jsonl" "${NETNS_ADDRS[2]}" <<'PY'
import json, sys
records = [json.loads(l) for l in open(sys.argv[1])]
bad = sys.argv[2]
at = next(i for i, r in enumerate(records) if r["event"] == "excluded")
assert records[at]["host"] == bad
late = [r for r in records[at:] if r["event"] == "started" and r["hosts"] == bad]
assert not late, late
final = [r for r in records if r["event"] == "finished" and r["final"]]
assert len(final) == 8 and all(r["result"] == "ok" for r in final), final
assert all(r["hosts"] != bad for r in final)
PY
grep -q "broken GPU" "$t"/s/trial-*/output.log || fail "the failing attempt's stderr is not in its output.log"
