#!/usr/bin/env bash
# Issue 16: elastic restarts on the 4 namespace hosts with real PyTorch DDP
# (gloo). A host that fails the preflight is left out at the start; a host
# killed mid-run (link down, every process killed) is left out and the gang
# restarts on the other three (min_np met) with ranks and world size
# recomputed, DDL_ATTEMPT and TORCHELASTIC_RESTART_COUNT counted up; the
# program resumes from the checkpoint it writes and the job exits 0. The
# summary and the --json events name the excluded hosts and why.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch with gloo is not importable"
netns_up 4
a=("${NETNS_ADDRS[@]}")
job=$t/job.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
[job]
command = ["$python", "$DDL_SOURCE_DIR/tests/fixtures/clients/elastic_train.py"]
grace = "2s"
env = { CKPT = "$t/ckpt.pt", READY = "$t/ready", STEPS = "12" }
[launch]
min_np = 3
[torch]
master_port = 29541
TOML
spec=$(netns_hostspec 1)

# 1. h4's sshd is gone before the start: the preflight leaves it out and
#    the job runs on 3 ranks.
for pid in $(ip netns pids "${NETNS_HOSTS[3]}"); do kill -9 "$pid" 2>/dev/null || true; done
DDL_TIMEOUT=50 expect_exit 0 ddl_ssh run "$job" -H "$spec" --backend ssh
expect_contains "$t/err" "ddl: leaving out host ${a[3]}: preflight: "
expect_contains "$t/err" "ddl: excluded host: ${a[3]} (preflight: "
for r in 0 1 2; do expect_contains "$t/out" "[$r] rank $r of 3 done at step 12"; done
expect_not_contains "$t/out" "[3]"
# The same with fewer slots than min_np left: no start, exit 3, and why.
expect_exit 3 ddl_ssh run "$job" -H "$spec" --backend ssh --np 4:4
expect_contains "$t/err" "ddl: error: cannot start: 3 slots left on 3 eligible hosts, below min_np 4"
echo "ok: a host failing the preflight is left out at the start"

# 2. h3 dies mid-run (link down, every process killed, at step 3 of attempt
#    0): it is left out and the gang restarts on h1, h2 and h4.
netns_down
rm -f "$t/ckpt.pt" "$t/ready"
netns_up 4
a=("${NETNS_ADDRS[@]}")
sed -i "s/^min_np = 3/min_np = 3\nmax_host_losses = 1/" "$job"
sed -i "s/STEPS = \"12\"/STEPS = \"25\"/" "$job"
spec=$(netns_hostspec 1)
timeout -k 5 80 ip netns exec "$NETNS_CLIENT" "$DDL" run "$job" -H "$spec" --backend ssh --json \
  >"$t/events" 2>"$t/err" &
runner=$!
wait_files 1 "$t/ready"
netns_crash_host 2
lost_at=$SECONDS
rc=0; wait "$runner" || rc=$?
[[ $rc == 0 ]] || { cat "$t/err"; tail -20 "$t/events"; fail "after losing h3: exit $rc, want 0"; }
echo "ok: the job finished $((SECONDS - lost_at))s after h3 was lost"
# The events, checked as JSON: h3 excluded and why, in an event and in the
# summary; attempt 1 has world size 3 on h1, h2, h4, restart counters at 1,
# and resumed from the checkpoint (not from step 0).
python3 - "$t/events" "${a[2]}" "${a[3]}" <<'PY' || fail "the events of the elastic restart"
import json, re, sys
events = [json.loads(line) for line in open(sys.argv[1])]
lost, h4 = sys.argv[2], sys.argv[3]
def check(ok, what):
    if not ok:
        print("FAIL:", what, file=sys.stderr); sys.exit(1)
excluded = [e for e in events if e["event"] == "host_excluded"]
check([(e["host"], e["attempt"]) for e in excluded] == [(lost, 1)], f"host_excluded events: {excluded}")
check(excluded[0]["why"].startswith(f"lost the connection to {lost}"), excluded[0]["why"])
summary = [e for e in events if e["event"] == "summary"][-1]
check(summary["result"] == "ok" and summary["exit_code"] == 0 and summary["attempts"] == 2, summary)
check([h["host"] for h in summary["excluded_hosts"]] == [lost], summary)
check(summary["excluded_hosts"][0]["why"].startswith("lost the connection"), summary)
started = [(e["rank"], e["host"]) for e in events if e["event"] == "started" and e["attempt"] == 1]
check(sorted(started)[2] == (2, h4) and len(started) == 3, f"attempt 1 started {started}")
lines = [e["line"] for e in events if e["event"] == "output"]
check("rank 0 of 4 attempt 0 restart_count 0 resumes at step 0" in lines, "attempt 0")
for r in range(3):
    resumed = [l for l in lines if l.startswith(f"rank {r} of 3 attempt 1 restart_count 1 resumes at step ")]
    check(resumed and int(resumed[0].split()[-1]) >= 3, f"rank {r} resumed: {resumed}")
    check(f"rank {r} of 3 done at step 25" in lines, f"rank {r} done")
check(not any(l.startswith("rank 3 of 3") for l in lines), "a rank 3 in a world of 3")
PY
echo "ok: a host killed mid-run is left out and the job finishes on the other three"
