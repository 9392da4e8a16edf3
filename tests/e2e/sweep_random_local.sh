#!/usr/bin/env bash
# ddl sweep on this machine: random search is reproducible from its seed,
# trials really get their values (env and command), job-file errors come all
# at once with FILE:LINE:COL and exit 2.
source "$(dirname "$0")/common.inc"
job=$t/random.toml
cat >"$job" <<'TOML'
[job]
command = 'echo lr={lr} opt={opt} env=$DDL_PARAM_LR/$DDL_PARAM_OPT trial=$DDL_TRIAL; echo "acc: $DDL_TRIAL" >&2'
[sweep]
method = "random"
samples = 5
seed = 42
max_parallel = 2
metric = { name = "acc", goal = "max" }
[sweep.parameters]
lr = { min = 0.0001, max = 0.1, scale = "log" }
opt = ["sgd", "adam", "lamb"]
TOML
expect_exit 0 "$DDL" sweep "$job" --np 1 -H localhost:4 --dry-run --json
cp "$t/out" "$t/first.json"
expect_exit 0 "$DDL" sweep "$job" --np 1 -H localhost:4 --dry-run --json
cmp -s "$t/first.json" "$t/out" || fail "the same seed gave other trials"
sed -i 's/seed = 42/seed = 43/' "$job"
expect_exit 0 "$DDL" sweep "$job" --np 1 -H localhost:4 --dry-run --json
if cmp -s "$t/first.json" "$t/out"; then fail "another seed gave the same trials"; fi
sed -i 's/seed = 43/seed = 42/' "$job"

# Run it: the values the dry run listed are what each trial got; 2 at a time.
expect_exit 0 "$DDL" sweep "$job" -H localhost:4 --dir "$t/s" --json
python3 - "$t/first.json" "$t/out" "$t/s" <<'PY'
import json, sys
planned = {t["trial"]: t["params"] for t in json.load(open(sys.argv[1]))["trials"]}
done = json.load(open(sys.argv[2]))
assert [t["trial"] for t in done["trials"]] == [4, 3, 2, 1, 0], done  # acc = trial, goal max
for t in done["trials"]:
    p = planned[t["trial"]]
    assert t["params"] == p and t["metric"] == t["trial"], t
    assert 0.0001 <= p["lr"] <= 0.1 and p["opt"] in ("sgd", "adam", "lamb")
    log = open(f"{sys.argv[3]}/trial-{t['trial']:04d}/output.log").read()
    want = f"opt={p['opt']} env="
    assert want in log and f"trial={t['trial']}" in log, log
    line = next(l for l in log.splitlines() if l.startswith("[0] lr="))
    got_lr, env = line.split("lr=")[1].split(" ")[0], line.split("env=")[1].split("/")[0]
    assert float(got_lr) == p["lr"] and float(env) == p["lr"], (line, p)
started = [json.loads(l) for l in open(f"{sys.argv[3]}/journal.jsonl")]
running = most = 0
for r in started:
    running += {"started": 1, "finished": -1}.get(r["event"], 0)
    most = max(most, running)
assert most <= 2, most
PY

# Every error at once, with its place; exit 2.
cat >"$t/bad.toml" <<'TOML'
[job]
command = ["true"]
[sweep]
method = "random"
samples = 0
metric = { name = "loss", goal = "lowest" }
[sweep.parameters]
lr = { min = 0.1, max = 1, scale = "logarithmic" }
TOML
expect_exit 2 "$DDL" sweep "$t/bad.toml"
expect_contains "$t/err" "ddl: error: $t/bad.toml:5:11: sweep.samples: must be between 1 and 100000"
expect_contains "$t/err" "$t/bad.toml:6:34: sweep.metric.goal: 'lowest' is not one of min, max"
expect_contains "$t/err" "$t/bad.toml:8:36: sweep.parameters.lr.scale: 'logarithmic' is not one of linear, log"
# No [sweep]: a clear error. `ddl run` accepts a job file with one.
printf '[job]\ncommand = ["true"]\n' >"$t/plain.toml"
expect_exit 2 "$DDL" sweep "$t/plain.toml"
expect_contains "$t/err" "no [sweep] section"
expect_exit 0 "$DDL" run "$job" --np 1
# A fixed port shared by trials at once is refused.
printf '[torch]\nmaster_port = 29500\n' >>"$job"
expect_exit 2 "$DDL" sweep "$job" -H localhost:2
expect_contains "$t/err" "torch.master_port = 29500: trials that run at once would share this port"
