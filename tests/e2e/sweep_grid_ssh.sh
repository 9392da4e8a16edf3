#!/usr/bin/env bash
# ddl sweep: HopsML's grid (learning_rate x dropout, 6 trials) over the ssh
# backend on 3 namespace hosts, a real python3 worker printing its loss; the
# table sorted by the metric, --json, the journal and per-trial folders.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v python3 >/dev/null || skip "python3 is not installed"
netns_up 3
job=$t/grid.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
[job]
command = ["python3", "$DDL_SOURCE_DIR/examples/sweep_train.py", "--learning-rate", "{learning_rate}", "--dropout", "{dropout}"]
[sweep]
metric = { name = "loss", goal = "min" }
[sweep.parameters]
learning_rate = [0.001, 0.005, 0.01]
dropout = [0.5, 0.6]
TOML

# --dry-run: every trial, the first wave placed (3 hosts x 1 slot), the rest queued.
expect_exit 0 ddl_ssh sweep "$job" -H "$(netns_hostspec 1)" --backend ssh --dry-run
expect_contains "$t/out" "learning_rate=0.001 dropout=0.5  ${NETNS_ADDRS[0]}:1"
expect_contains "$t/out" "learning_rate=0.005 dropout=0.5  ${NETNS_ADDRS[2]}:1"
expect_contains "$t/out" "learning_rate=0.01 dropout=0.6   queued"
[[ $(grep -c '  queued  ' "$t/out") == 3 ]] || fail "expected 3 queued trials: $(cat "$t/out")"

expect_exit 0 ddl_ssh sweep "$job" -H "$(netns_hostspec 1)" --backend ssh --dir "$t/s" --json
python3 - "$t/out" "$t/s" "${NETNS_ADDRS[@]}" <<'PY'
import json, sys, os
doc = json.load(open(sys.argv[1]))
sweep_dir, addrs = sys.argv[2], sys.argv[3:]
trials = doc["trials"]
assert len(trials) == 6, trials
assert all(t["result"] == "ok" and t["exit_code"] == 0 and t["attempts"] == 1 for t in trials), trials
assert doc["metric"] == {"name": "loss", "goal": "min"}
assert doc["best"] == 2 and trials[0]["params"] == {"learning_rate": 0.005, "dropout": 0.5}, trials[0]
metrics = [t["metric"] for t in trials]
assert metrics == sorted(metrics), metrics
for t in trials:
    p = t["params"]
    want = abs(p["learning_rate"] - 0.005) * 100 + (p["dropout"] - 0.5) + 0.1 / 3
    assert abs(t["metric"] - want) < 1e-5, (t, want)
    assert t["hosts"] in addrs, t
    out = open(f"{sweep_dir}/trial-{t['trial']:04d}/output.log").read()
    assert f"[0] trial {t['trial']} rank 0 on h" in out, out
    assert f"dir {sweep_dir}/trial-{t['trial']:04d}" in out, out
hosts = {t["hosts"] for t in trials}
assert len(hosts) == 3, hosts  # packed over every host
records = [json.loads(l) for l in open(f"{sweep_dir}/journal.jsonl")]
assert records[0]["event"] == "sweep" and len(records[0]["trials"]) == 6
assert sum(1 for r in records if r["event"] == "finished" and r["final"]) == 6
assert records[-1] == {**records[-1], "event": "end", "exit_code": 0}
PY
# Nothing left on any host.
[[ $(netns_count_all sweep_train.py) == 0 ]] || fail "workers left behind"

# The table: best first, the metric column, the hosts.
expect_exit 0 ddl_ssh sweep "$job" -H "$(netns_hostspec 2)" --backend ssh --dir "$t/s2" -q
[[ $(sed -n 1p "$t/out" | tr -s ' ') == "TRIAL learning_rate dropout loss TIME HOSTS RESULT" ]] ||
  fail "table head: $(sed -n 1p "$t/out")"
read -r trial lr dropout loss _ < <(sed -n 2p "$t/out")
[[ "$trial $lr $dropout $loss" == "2 0.005 0.5 0.033333" ]] || fail "best row: $(sed -n 2p "$t/out")"
expect_contains "$t/out" "sweep directory: $t/s2"
