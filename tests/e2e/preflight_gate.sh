#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest: timing
# The preflight gate (issue 43): [preflight] and --preflight check the
# network among the job's hosts before its ranks start, with real faults on
# the test hosts (tests/netns/faults.inc): a host whose link is shaped to
# 50 Mbit/s, a link between two hosts shaped so, a host whose check is
# stopped as it starts. The gate names the host or link and why; on_fail stops the job
# (exit 3, nothing launched), leaves the host out (the job runs on the
# rest), or warns. min_fraction = 0.25 here: these hosts' bandwidth is this
# machine's CPU (bench/README.md, "preflight"); the timing label runs it
# alone, where another test's load cannot starve the hosts it measures.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"

# One host: no network to check, the job runs; a dry run checks nothing.
printf '[job]\ncommand = ["sh", "-c", "echo launched"]\n[preflight]\nenabled = true\non_fail = "stop"\n' >"$t/local.toml"
expect_exit 0 "$DDL" run "$t/local.toml" -H localhost:2
expect_contains "$t/out" "launched"
# A section without enabled = true (DESIGN.md: off by default) is said to be off.
printf '[job]\ncommand = ["true"]\n[preflight]\non_fail = "stop"\n' >"$t/off.toml"
expect_exit 0 "$DDL" run "$t/off.toml" -H localhost:1
expect_contains "$t/err" "ddl: warning: [preflight] is not enabled: set enabled = true in it, or pass --preflight"
expect_exit 0 "$DDL" run "$t/local.toml" -H localhost:2 --dry-run
# A bad value is reported where it is.
printf '[job]\ncommand = ["true"]\n[preflight]\nmin_fraction = 2\n' >"$t/bad.toml"
expect_exit 2 "$DDL" run "$t/bad.toml" -H localhost:1
expect_contains "$t/err" "bad.toml:4:"

source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
source "$DDL_SOURCE_DIR/tests/netns/faults.inc"
netns_up 4
trap 'rc=$?; fault_stall_end; netns_down; rm -rf "$t"; exit $rc' EXIT
A=("${NETNS_ADDRS[@]}")
hosts=$(netns_hostspec 1)
job() {  # job ON_FAIL: the job file with [preflight] on_fail = ON_FAIL ("" none)
  cat "$NETNS_DIR/ssh.toml"
  printf '[job]\ncommand = ["sh", "-c", "echo rank $DDL_RANK on $(hostname)"]\n'
  [[ -z $1 ]] || printf '[preflight]\nenabled = true\nmin_fraction = 0.25\non_fail = "%s"\n' "$1"
}
run_job() {  # run_job EXPECTED_EXIT ON_FAIL DDL_ARGS...
  local code=$1 on_fail=$2; shift 2
  job "$on_fail" >"$t/job.toml"
  expect_exit "$code" ddl_ssh run "$t/job.toml" -H "$hosts" "$@"
}

# No fault: the check passes, its event (DESIGN.md's names) has the 6 pairs of 4 hosts, the job runs.
run_job 0 stop --json
python3 - "$t/out" <<'PY' || fail "preflight event: $(grep preflight "$t/out")"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
pre = [e for e in events if e["event"] == "preflight"]
assert len(pre) == 1 and pre[0]["action"] == "passed" and pre[0]["findings"] == [], pre
assert len(pre[0]["links"]) == 6 and all(l["gbps"] > 0 and l["latency_us"] > 0 and l["from"] != l["to"] for l in pre[0]["links"]), pre
assert pre[0]["excluded"] == [] and len(pre[0]["hosts"]) == 4, pre
assert len([e for e in events if e["event"] == "exit"]) == 4 or len([e for e in events if e["event"] == "started"]) == 4, events
PY

# A host whose link is slow: named with its figures; stop: exit 3, no rank started.
fault_rate 2 50mbit
run_job 3 stop
expect_contains "$t/err" "ddl: error: preflight: ${A[2]}: "
expect_contains "$t/err" " GB/s to 198."
expect_contains "$t/err" " against a median of "
expect_contains "$t/err" '([preflight] on_fail = "stop")'
expect_not_contains "$t/out" "rank "
# exclude, np a range: left out as a lost host is, the job runs on the other three.
run_job 0 exclude --np 2:4
expect_contains "$t/err" "ddl: warning: preflight: ${A[2]}: "
expect_contains "$t/err" "; left out"
for h in h1 h2 h4; do expect_contains "$t/out" " on $h"; done
expect_not_contains "$t/out" " on h3"
# warn: said, and the job runs on all four.
run_job 0 warn
expect_contains "$t/err" '; launching anyway ([preflight] on_fail = "warn")'
for h in h1 h2 h3 h4; do expect_contains "$t/out" " on $h"; done
# --preflight without the section: its defaults (np fixed: stop); --no-preflight: none.
run_job 3 "" --preflight
expect_contains "$t/err" "ddl: error: preflight: ${A[2]}: "
run_job 0 stop --no-preflight
expect_not_contains "$t/err" "preflight"
# exclude, but no host may be lost: exit 3 naming the host and the limit.
printf '[launch]\nmax_host_losses = 0\n' >"$t/limit.toml"
{ job exclude; cat "$t/limit.toml"; } >"$t/job.toml"
expect_exit 3 ddl_ssh run "$t/job.toml" -H "$hosts" --np 2:4
expect_contains "$t/err" "ddl: error: cannot start: the preflight left out ${A[2]} (1 host lost, more than launch.max_host_losses 0)"
# exclude with a fixed np that the others cannot hold: exit 3, said why.
run_job 3 exclude --np 4
expect_contains "$t/err" "ddl: error: preflight: cannot start without ${A[2]}: "
# The same check without a job: ddl hosts --check --bench.
job "" >"$t/hosts.toml"
expect_exit 3 ddl_ssh hosts "$t/hosts.toml" -H "$hosts" --check --bench
expect_contains "$t/out" "preflight: 4 hosts, 6 pairs in "
expect_contains "$t/out" "  ${A[2]}: "
expect_exit 3 ddl_ssh hosts "$t/hosts.toml" -H "$hosts" --check --bench --json
python3 - "$t/out" "${A[2]}" <<'PY' || fail "hosts --check --bench --json: $(cat "$t/out")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["hosts"]) == 4 and all(h["reachable"] for h in doc["hosts"]), doc
found = doc["preflight"]["findings"]
assert [f["host"] for f in found] == [sys.argv[2]] and found[0]["kind"] == "host", found
PY
# A sweep: a trial's check names the slow host, which the sweep excludes at
# once (not the trial's other hosts); the trial runs again on the rest, and
# so do the others.
{ job stop; printf '[sweep]\nmax_parallel = 1\n[sweep.parameters]\nx = [1, 2, 3]\n'; } >"$t/sweep.toml"
expect_exit 0 ddl_ssh sweep "$t/sweep.toml" -H "$hosts" --backend ssh --np 3 --dir "$t/sweep"
expect_contains "$t/err" "host ${A[2]} excluded for the rest of the sweep: trial 0's preflight: ${A[2]}: "
expect_not_contains "$t/err" "host ${A[0]} excluded"
expect_not_contains "$t/err" "host ${A[1]} excluded"
expect_contains "$t/err" "ddl: trial 0 ok in "
grep -q "\"event\": *\"excluded\", *\"host\": *\"${A[2]}\"" "$t/sweep/journal.jsonl" || fail "no excluded event: $(cat "$t/sweep/journal.jsonl")"
expect_exit 2 "$DDL" hosts -H localhost:1 --bench
expect_contains "$t/err" "ddl: error: --bench: only with --check (ddl hosts --check --bench)"
fault_clear 2

# A slow link between two hosts fine with their other peers: named as a link.
fault_link 1 2 50mbit
run_job 3 stop
expect_contains "$t/err" "ddl: error: preflight: link ${A[1]} - ${A[2]}: "
expect_contains "$t/err" "both hosts fine with their other peers"
fault_clear 1; fault_clear 2

# A host whose ddl is slow to answer (its check stopped as it starts): named,
# and no other host or link with it; stopped at the budget, nothing left.
fault_stall 3 "worker preflight"
run_job 3 stop
expect_contains "$t/err" "ddl: error: preflight: ${A[3]} did not answer the check within 5s ([preflight] on_fail = \"stop\")"
fault_stall_end
for ns in "${NETNS_HOSTS[@]}"; do
  ip netns pids "$ns" | while read -r pid; do
    ! tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "worker preflight" || fail "a check worker is left: $pid"
  done
done
echo PASS
