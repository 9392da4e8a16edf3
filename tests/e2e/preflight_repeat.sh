#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest: timing
# The preflight gate run again and again (issue 43): on 4 namespace hosts,
# with no fault it names no host or link in 20 runs (no false positive under
# this machine's load); with one host's link shaped to 50 Mbit/s it names
# that host in every one of 10 runs; with the link between two hosts shaped
# so, it names the link in every one of 5 runs. Same job as preflight_gate.sh
# (min_fraction = 0.25, on_fail = "stop"). Each part prints a tally: how many
# runs measured a pair again ("remeasured") and the smallest pair/median
# bandwidth ratio seen (bench/README.md, "preflight", quotes these figures).
# Timing label: it runs alone, where another test's load cannot starve the
# hosts it measures.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
source "$DDL_SOURCE_DIR/tests/netns/faults.inc"
netns_up 4
trap 'rc=$?; netns_down; rm -rf "$t"; exit $rc' EXIT
A=("${NETNS_ADDRS[@]}")
{
  cat "$NETNS_DIR/ssh.toml"
  # shellcheck disable=SC2016 # expanded by each rank's sh
  printf '[job]\ncommand = ["sh", "-c", "echo rank $DDL_RANK on $(hostname)"]\n'
  printf '[preflight]\nenabled = true\nmin_fraction = 0.25\non_fail = "stop"\n'
} >"$t/job.toml"

# repeat PART RUNS EXIT WANT: runs the job RUNS times, each exiting EXIT,
# each event's findings exactly WANT ("none", "host ADDR", "link ADDR ADDR");
# prints the part's tally.
repeat() {
  local part=$1 runs=$2 code=$3 want=$4 i
  : >"$t/tally"
  for ((i = 1; i <= runs; i++)); do
    expect_exit "$code" ddl_ssh run "$t/job.toml" -H "$(netns_hostspec 1)" --json
    python3 - "$t/out" "$want" "$i" >>"$t/tally" <<'PY' || fail "part $part, run $i: $(cat "$t/err")"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
pre = [e for e in events if e["event"] == "preflight"]
assert len(pre) == 1, f"{len(pre)} preflight events"
pre = pre[0]
named = sorted(" ".join([f["kind"], *sorted({f["host"], f["peer"]} if f["kind"] == "link" else [f["host"]])])
               for f in pre["findings"])
want = [] if sys.argv[2] == "none" else [sys.argv[2]]
assert named == want, f"run {sys.argv[3]}: named {named}, expected {want}: {pre['findings']}"
assert pre["action"] == ("passed" if not want else "stopped"), pre["action"]
bw = [l["gbps"] for l in pre["links"] if l["gbps"] is not None]
lat = [l["latency_us"] for l in pre["links"] if l["latency_us"] is not None]
print(pre["remeasured"], min(bw) / pre["median_gbps"], max(lat) / pre["median_latency_us"], pre["seconds"])
PY
    if [[ $want == host* ]]; then expect_contains "$t/err" "ddl: error: preflight: ${want#host }: "; fi
    if [[ $want == link* ]]; then expect_contains "$t/err" "ddl: error: preflight: link ${A[1]} - ${A[2]}: "; fi
  done
  awk -v part="$part" -v want="$want" -v runs="$runs" '
    $1 > 0 { again++ } NR == 1 || $2 < lo { lo = $2 } NR == 1 || $2 > hi { hi = $2 } $3 > lat { lat = $3 }
    { s += $4 }
    END { printf "part %s: %d of %d runs named %s; %d measured a pair again; pair/median bandwidth %.3f to %.3f, latency up to %.2fx the median; gate %.2f s on average\n",
                 part, NR, runs, want, again, lo, hi, lat, s / NR }' "$t/tally"
}

repeat a 20 0 none
fault_rate 2 50mbit
repeat b 10 3 "host ${A[2]}"
fault_clear 2
fault_link 1 2 50mbit
repeat c 5 3 "link ${A[1]} ${A[2]}"
echo PASS
