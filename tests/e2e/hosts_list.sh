#!/usr/bin/env bash
# ddl hosts: the table, --json, sources, errors.
source "$(dirname "$0")/common.inc"

expect_exit 0 timeout 10 "$DDL" hosts -H 'gpu[01-02]:4,cpu-a'
expect_contains "$t/out" "NAME"
expect_contains "$t/out" "SOURCE"
grep -qE '^gpu02 +gpu02 +4 +- +list$' "$t/out" || { cat "$t/out"; fail "gpu02 row"; }
grep -qE '^cpu-a +cpu-a +1 +- +list$' "$t/out" || { cat "$t/out"; fail "cpu-a row"; }

expect_exit 0 timeout 10 "$DDL" hosts -H 'gpu[01-02]:4,cpu-a' --json
python3 - "$t/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
hosts = doc["hosts"]
assert [h["name"] for h in hosts] == ["gpu01", "gpu02", "cpu-a"], hosts
for h in hosts:
    assert list(h) == ["name", "address", "slots", "gpus", "source"], h
    assert h["address"] == h["name"] and h["source"] == "list" and h["gpus"] == []
assert [h["slots"] for h in hosts] == [4, 4, 1]
PY

printf 'a slots=2\nb:3\n' >"$t/hostfile"
expect_exit 0 timeout 10 "$DDL" hosts --hostfile "$t/hostfile" --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert [(x["name"], x["slots"], x["source"]) for x in h] == [("a", 2, "hostfile"), ("b", 3, "hostfile")], h
' "$t/out"

# No source: this machine alone.
expect_exit 0 timeout 10 "$DDL" hosts --np 3 --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert len(h) == 1 and h[0]["name"] == "localhost" and h[0]["address"] == "127.0.0.1", h
assert h[0]["slots"] == 3 and h[0]["source"] == "local", h
' "$t/out"

# A discovery script in the job file, and one that fails.
cat >"$t/found.sh" <<'SH'
#!/bin/sh
echo "d1:2"
echo "d2"
SH
cat >"$t/broken.sh" <<'SH'
#!/bin/sh
echo "scheduler unreachable" >&2
exit 5
SH
chmod +x "$t/found.sh" "$t/broken.sh"
printf '[hosts]\ndiscovery_script = "./found.sh"\n' >"$t/script.toml"
expect_exit 0 timeout 10 "$DDL" hosts "$t/script.toml"
grep -qE '^d1 +d1 +2 +- +script$' "$t/out" || { cat "$t/out"; fail "script row"; }
printf '[hosts]\ndiscovery_script = "./broken.sh"\n' >"$t/broken.toml"
expect_exit 3 timeout 10 "$DDL" hosts "$t/broken.toml"
expect_contains "$t/err" "exited with status 5"
expect_contains "$t/err" "scheduler unreachable"

# Slurm allocation from the environment.
printf '[hosts]\nslurm = true\n' >"$t/slurm.toml"
expect_exit 0 env SLURM_JOB_NODELIST='sn[1-3]' SLURM_TASKS_PER_NODE='2(x2),1' \
  timeout 10 "$DDL" hosts "$t/slurm.toml" --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert [(x["name"], x["slots"], x["source"]) for x in h] == [("sn1", 2, "slurm"), ("sn2", 2, "slurm"), ("sn3", 1, "slurm")], h
' "$t/out"
expect_exit 2 env -u SLURM_JOB_NODELIST -u SLURM_NODELIST timeout 10 "$DDL" hosts "$t/slurm.toml"
expect_contains "$t/err" "SLURM_JOB_NODELIST is not set"

# --check with the local backend (auto's choice for this machine's names):
# this machine answers (ssh: tests/e2e/ssh_hosts_check.sh; hosts that do not
# exist: tests/e2e/backend_auto.sh).
expect_exit 0 timeout 10 "$DDL" hosts -H localhost,127.0.0.2 --check
expect_contains "$t/out" "REACHABLE"
