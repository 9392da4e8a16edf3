#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ddl run --mpi pmix` and [mpi] launch = "pmix" on this machine (issue 33):
# a C program built with mpicc and mpi4py run as ONE world of N ranks with no
# mpirun or orted, each line prefixed with its MPI rank, DDL_RANK per MPI
# rank; MPI_Abort(comm, 7) from rank 2 ends the job with 7 within seconds and
# nothing is left; a rank that exits without MPI_Finalize is a failure, not a
# hang; Ctrl-C; two hosts of the list that are both this machine (127.0.0.1
# and localhost) run as one world, each with its own PMIx name and folders;
# no libpmix on this machine: exit 2 naming what to install;
# --mpi pmix with backend mpirun and bad values: exit 2.
source "$(dirname "$0")/common.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
fixtures=$DDL_SOURCE_DIR/tests/fixtures/mpi
mpicc -O1 -o "$t/ring_c" "$fixtures/ring.c"
mpicc -O1 -o "$t/pmix_hello" "$fixtures/pmix_hello.c"
mpicc -O1 -o "$t/pmix_fail" "$fixtures/pmix_fail.c"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O1 -o "$t/pmix_keys" "$fixtures/pmix_keys.c" $(pkg-config --cflags --libs pmix)
export TMPDIR=$t/tmp
mkdir "$TMPDIR"
me=$(hostname)
run() { timeout -k 5 60 "$DDL" run "$@"; }
ddl_pid=""
trap 'rc=$?; [[ -n $ddl_pid ]] && kill -KILL "$ddl_pid" 2>/dev/null; rm -rf "$t"; exit $rc' EXIT

# The ring as one world of 4: every rank sees 4, rank 0 counts the laps.
expect_exit 0 run --mpi pmix --np 4 "$t/ring_c"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] process $r of 4 on $me"; done
expect_contains "$t/out" "[0] process 0 passed"
expect_not_contains "$t/err" "error"

# The job file's [mpi] launch, the mpi framework, backend auto: local (not
# mpirun); mpi4py's helloworld and ringtest.
cat >"$t/job.toml" <<EOF
[job]
frameworks = ["mpi"]
[launch]
np = 3
[mpi]
launch = "pmix"
EOF
expect_exit 0 run "$t/job.toml" -v /usr/bin/python3 -m mpi4py.bench helloworld
for r in 0 1 2; do expect_contains "$t/out" "[$r] Hello, World! I am process $r of 3 on $me."; done
expect_contains "$t/err" "auto: every host is this machine"
expect_exit 0 run "$t/job.toml" /usr/bin/python3 -m mpi4py.bench ringtest -n 1024 -l 10
expect_contains "$t/out" "(3 processes, 1024 bytes)"

# Each MPI rank gets ddl's own variables for itself, not its host's.
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 0 run --mpi pmix --np 3 -- sh -c 'echo "id $DDL_RANK $DDL_WORLD_SIZE $DDL_LOCAL_RANK $DDL_LOCAL_SIZE"'
for r in 0 1 2; do expect_contains "$t/out" "[$r] id $r 3 $r 3"; done

# While the ranks run: they are under ddl, and no MPI daemon is.
"$DDL" run --mpi pmix --np 3 "$t/pmix_hello" 3 >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 600); do
  (($(grep -c "hello rank" "$t/out" || true) == 3)) && break
  sleep 0.05
done
expect_contains "$t/out" "[2] hello rank 2 of 3 universe 3 on $me sum 3"
tree=$(ps -eo pid=,ppid=,comm= | awk -v top="$ddl_pid" '
  { parent[$1] = $2; name[$1] = $3 }
  END { for (p in parent) { for (q = p; q != "" && q != 1; q = parent[q]) if (q == top) { print name[p]; break } } }')
[[ $(grep -cx pmix_hello <<<"$tree") == 3 ]] || fail "not 3 ranks under ddl: $tree"
if grep -Exq 'mpirun|mpiexec|orted|orterun|prted|prterun' <<<"$tree"; then fail "an MPI daemon runs under ddl: $tree"; fi
wait "$ddl_pid" || fail "the sleeping hello failed: $(cat "$t/err")"
ddl_pid=""

# MPI_Abort(MPI_COMM_WORLD, 7) in rank 2: ddl exits 7 within seconds, all gone.
start=$SECONDS
expect_exit 7 run --mpi pmix --np 4 "$t/pmix_fail" abort 7 2
((SECONDS - start < 15)) || fail "MPI_Abort took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "rank 2 called MPI_Abort with status 7"
[[ -z $(pgrep -f -- "$t/pmix_fail") ]] || fail "ranks left after MPI_Abort: $(pgrep -af -- "$t/pmix_fail")"

# A rank that exits 0 without MPI_Finalize while the others wait: exit 1.
start=$SECONDS
expect_exit 1 run --mpi pmix --np 3 "$t/pmix_fail" exit0
((SECONDS - start < 15)) || fail "a rank without MPI_Finalize took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "rank 1 exited with code 0 without calling MPI_Finalize"
[[ -z $(pgrep -f -- "$t/pmix_fail") ]] || fail "ranks left: $(pgrep -af -- "$t/pmix_fail")"

# Ctrl-C: exit 130, nothing left.
"$DDL" run --mpi pmix --np 3 "$t/pmix_fail" sleep >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 600); do
  (($(grep -c "started" "$t/out" || true) == 3)) && break
  sleep 0.05
done
expect_contains "$t/out" "[2] rank 2 started"
kill -INT "$ddl_pid"
got=0
wait "$ddl_pid" || got=$?
ddl_pid=""
[[ $got == 130 ]] || fail "Ctrl-C gave exit $got: $(cat "$t/err")"
[[ -z $(pgrep -f -- "$t/pmix_fail") ]] || fail "ranks left after Ctrl-C: $(pgrep -af -- "$t/pmix_fail")"

# --log-dir: one log per MPI rank (rank-R.attempt-0.log, its lines without
# the tag), not per host; with split logs each stream's own.
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 0 run --mpi pmix -H 127.0.0.1:2,localhost:3 --np 5 --log-dir "$t/logs" -- \
  sh -c 'echo "out $DDL_RANK"; echo "err $DDL_RANK" >&2'
# A rank's stdout and stderr are two pipes: their order in the log is the
# order ddl read them, not the order they were written.
for r in 0 1 2 3 4; do
  [[ $(sort "$t/logs/rank-$r.attempt-0.log") == "err $r"$'\n'"out $r" ]] ||
    fail "rank $r's log: $(cat "$t/logs/rank-$r.attempt-0.log")"
done
[[ $(find "$t/logs" -type f | wc -l) == 5 ]] || fail "not 5 logs: $(ls "$t/logs")"
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 0 run --mpi pmix --np 3 --log-dir "$t/split" --split-logs -- sh -c 'echo "out $DDL_RANK"; echo "err $DDL_RANK" >&2'
[[ $(cat "$t/split/rank-2.attempt-0.stdout.log") == "out 2" ]] || fail "rank 2's stdout log: $(ls "$t/split")"
[[ $(cat "$t/split/rank-2.attempt-0.stderr.log") == "err 2" ]] || fail "rank 2's stderr log: $(ls "$t/split")"
# A line longer than the worker holds (100 kB, written in two halves) while
# another rank of the host writes its own lines in between: each rank's log
# has its own lines whole (rank 1's lines landed inside rank 0's before).
cat >"$t/long_line.py" <<'PY'
import os, sys, time
if os.environ["DDL_RANK"] == "0":
    sys.stdout.write("x" * 70000); sys.stdout.flush(); time.sleep(1)
    sys.stdout.write("y" * 30000 + "\nafter\n")
else:
    time.sleep(0.5); print("one"); print("two")
PY
expect_exit 0 run --mpi pmix --np 2 --log-dir "$t/long" -- python3 "$t/long_line.py"
expected=$(python3 -c 'print("x" * 70000 + "y" * 30000); print("after")')
[[ $(cat "$t/long/rank-0.attempt-0.log") == "$expected" ]] ||
  fail "rank 0's long line is not whole (runs of x and y squeezed): $(tr -s xy <"$t/long/rank-0.attempt-0.log" | head -c 300)"
[[ $(cat "$t/long/rank-1.attempt-0.log") == $'one\ntwo' ]] || fail "rank 1's log: $(head -c 300 "$t/long/rank-1.attempt-0.log")"
# --json: an output event names the MPI rank and carries its line without the
# tag; a piece of a long line is "partial" (before: rank 0, "[1] ..." text).
expect_exit 0 run --mpi pmix --np 2 --json -- python3 "$t/long_line.py"
python3 - "$t/out" <<'PY' || fail "--json output events: $(head -c 600 "$t/out")"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
out = [e for e in events if e["event"] == "output"]
by_rank = {r: [e for e in out if e["rank"] == r] for r in (0, 1)}
assert [e["line"] for e in by_rank[1]] == ["one", "two"], by_rank[1]
whole = "".join(e["line"] for e in by_rank[0][:-1])
assert whole == "x" * 70000 + "y" * 30000, len(whole)
assert all(e.get("partial") for e in by_rank[0][:-2]) and not by_rank[0][-2].get("partial"), by_rank[0]
assert by_rank[0][-1]["line"] == "after"
PY

# ddl heartbeat from an MPI rank speaks for its host's worker: a job whose
# ranks beat every second outlives watchdog.stall = 3s (before, the ranks had
# no DDL_RENDEZVOUS, every heartbeat failed and the watchdog ended it, exit 5).
printf '[watchdog]\nstall = "3s"\nprogress = "heartbeat"\n' >"$t/beat.toml"
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 0 run "$t/beat.toml" --mpi pmix -H 127.0.0.1:2,localhost:1 --np 3 -- \
  sh -c 'for i in 1 2 3 4 5; do "$0" heartbeat || exit 9; sleep 1; done; echo "beat $DDL_RANK"' "$DDL"
for r in 0 1 2; do expect_contains "$t/out" "[$r] beat $r"; done

# The watchdog's gdb dump shows the MPI ranks' stacks, each named, not the
# host worker's own (before: gdb of `ddl worker pmix-host`, run_host frames).
if have gdb; then
  printf '[watchdog]\nstall = "2s"\ndump = "gdb"\ndump_timeout = "20s"\n' >"$t/stall.toml"
  expect_exit 5 run "$t/stall.toml" --mpi pmix --np 2 -- sh -c 'echo start; exec sleep 30'
  for r in 0 1; do expect_contains "$t/err" "ddl: MPI rank $r (pid "; done
  [[ $(grep -c '^ddl: stacks of pid [0-9]* on .* by gdb:$' "$t/err") == 2 ]] || fail "not 2 rank stacks: $(cat "$t/err")"
  expect_contains "$t/err" "clock_nanosleep"
  expect_not_contains "$t/err" "run_host"
fi

# ddl ps and logs count and name MPI ranks, not the host's one worker
# (ps said 1 rank and logs --rank 2 was refused before).
export XDG_RUNTIME_DIR=$t/xdg
mkdir -m 0700 "$XDG_RUNTIME_DIR"
# shellcheck disable=SC2016 # expanded by each rank's sh
"$DDL" run --mpi pmix --np 3 --name pmixlive -- sh -c 'echo "line of $DDL_RANK"; sleep 30' \
  >"$t/live.out" 2>&1 &
ddl_pid=$!
wait_for "^$ddl_pid +pmixlive +3 +" "$DDL" ps
wait_for '^\[2\] line of 2$' "$DDL" logs pmixlive --rank 2
expect_exit 0 "$DDL" logs pmixlive --rank 2
[[ $(cat "$t/out") == "[2] line of 2" ]] || fail "logs --rank 2: $(cat "$t/out")"
expect_exit 0 "$DDL" stop pmixlive
wait "$ddl_pid" || true
ddl_pid=""
unset XDG_RUNTIME_DIR
expect_exit 7 run --mpi pmix --np 3 --log-dir "$t/abort" "$t/pmix_fail" abort 7 2
expect_contains "$t/abort/rank-2.attempt-0.log" "rank 2 started"
expect_not_contains "$t/abort/rank-1.attempt-0.log" "rank 2 started"

# Two hosts of the list that are this one machine: one world of 4, not two
# servers under one name (refused before) nor Open MPI's shared-memory
# segments of both hosts under one name (rank 1 crashed in MPI_Barrier before).
expect_exit 0 run --mpi pmix -H 127.0.0.1:2,localhost:2 --np 4 /usr/bin/python3 -m mpi4py.bench helloworld
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] Hello, World! I am process $r of 4 on $me."; done
expect_exit 0 run --mpi pmix -H 127.0.0.1:2,localhost:2 --np 4 /usr/bin/python3 -m mpi4py.bench ringtest -n 1024 -l 10
expect_contains "$t/out" "(4 processes, 1024 bytes)"
expect_exit 0 run --mpi pmix -H 127.0.0.1:2,localhost:2 --np 4 "$t/pmix_hello" 0
expect_contains "$t/out" "[3] hello rank 3 of 4 universe 4 on $me sum 6"
# Each host's ranks share a shared-memory folder of their host's own, gone
# after the job, also after MPI_Abort (this job's folders, named by its
# ranks: other tests' jobs may have theirs in /dev/shm at the same time).
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 7 run --mpi pmix -H 127.0.0.1:2,localhost:2 --np 4 -- \
  sh -c 'echo "shm $OMPI_MCA_btl_vader_backing_directory"; exec "$0" abort 7 3' "$t/pmix_fail"
expect_contains "$t/err" "rank 3 called MPI_Abort with status 7"
used=$(sed -n 's/^\[[0-9]*\] shm //p' "$t/out" | sort -u)
[[ $(wc -l <<<"$used") == 2 ]] || fail "not one shared-memory folder per host: $used"
for dir in $used; do [[ ! -e $dir ]] || fail "left after the job: $dir"; done
# The summary names the MPI rank the host's worker blamed, and its lines
# (before: "rank 1 on localhost", the second host's worker).
expect_contains "$t/err" "ddl: error: rank 3 on localhost exited with code 7 after"
expect_contains "$t/err" "stderr lines of rank 3:"
expect_exit 7 run --mpi pmix -H 127.0.0.1:2,localhost:2 --np 4 --json "$t/pmix_fail" abort 7 3
expect_contains "$t/out" '"failed_rank":3,"host":"localhost","code":7'
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 3 run --mpi pmix --np 3 --max-restarts 1 -- sh -c 'exit $((DDL_RANK == 2 ? 3 : 0))'
expect_contains "$t/err" "ddl: rank 2 on localhost exited with code 3 after"
expect_contains "$t/err" "restarting (DDL_ATTEMPT=1, restart 1 of 1)"
# The requeue line names the MPI rank too (before: "rank 0", the worker).
printf '[job]\nrequeue_exit_code = 85\n' >"$t/requeue.toml"
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 85 run "$t/requeue.toml" --mpi pmix --np 3 -- sh -c 'exit $((DDL_RANK == 2 ? 85 : 0))'
expect_contains "$t/err" "ddl: rank 2 asked to be requeued (exit code 85 = job.requeue_exit_code)"

# Refused: --mpi pmix with backend mpirun, an unknown value, a bad [mpi] key,
# --output-ranks (the gang is one worker per host).
expect_exit 2 run --mpi pmix --backend mpirun --np 2 "$t/ring_c"
expect_contains "$t/err" "backend mpirun and mpi.launch \"pmix\" (--mpi pmix): mpirun starts the ranks itself"
expect_exit 2 run --mpi orte --np 2 "$t/ring_c"
expect_contains "$t/err" "--mpi"
printf '[mpi]\nlaunch = "orte"\n' >"$t/bad.toml"
expect_exit 2 run "$t/bad.toml" --np 2 "$t/ring_c"
expect_contains "$t/err" "bad.toml:2:10: mpi.launch: "
expect_exit 2 run --mpi pmix --np 2 --output-ranks 1 "$t/ring_c"
expect_contains "$t/err" "--output-ranks: not available with --mpi pmix"

# The dry run shows the gang: one pmix-host worker per host with the counts,
# and the MPI world the workers build: each rank's host and PMIx keys, the
# keys every rank sees and each host's; the same keys the ranks then get.
expect_exit 0 run --mpi pmix --np 3 --dry-run "$t/ring_c"
expect_contains "$t/out" "worker pmix-host --host-ranks 3"
expect_exit 0 run --mpi pmix -H 127.0.0.1:2,localhost:3 --np 5 --dry-run "$t/pmix_keys"
cp "$t/out" "$t/dry"
expect_contains "$t/dry" "MPI world (--mpi pmix): 5 ranks on 2 hosts, PMIx namespace ddl-ddl-0, no mpirun."
expect_contains "$t/dry" "pmix.job.size=5 "
expect_contains "$t/dry" "pmix.nmap=$me-ddl0,$me-ddl1 pmix.pmap=0,1;2,3,4 "
expect_contains "$t/dry" "  localhost: pmix.local.size=3 pmix.node.size=3 pmix.lpeers=2,3,4 pmix.lldr=2 "
grep -Eq "^4 +localhost +$me-ddl1 +pmix.rank=4 .*pmix.lrank=2 pmix.nrank=2 pmix.hname=$me-ddl1 pmix.nodeid=1\$" "$t/dry" ||
  fail "no row of rank 4 in the dry run: $(cat "$t/dry")"
expect_exit 0 run --mpi pmix -H 127.0.0.1:2,localhost:3 --np 5 "$t/pmix_keys"
for want in "pmix.lpeers=2,3,4" "pmix.lrank=2" "pmix.hname=$me-ddl1" "pmix.nodeid=1" "pmix.job.size=5"; do
  expect_contains "$t/out" "[4] 4 $want"
done
expect_exit 0 run --mpi pmix -H 127.0.0.1:2,localhost:3 --np 5 --dry-run --json "$t/pmix_keys"
/usr/bin/python3 - "$t/out" "$me" <<'PY' || fail "the dry run's mpi_world: $(cat "$t/out")"
import json, sys
world = json.load(open(sys.argv[1]))["mpi_world"]
me = sys.argv[2]
assert world["namespace"] == "ddl-ddl-0" and world["world_size"] == 5, world
assert world["keys"]["pmix.num.nodes"] == 2 and world["keys"]["pmix.spawned"] is False, world["keys"]
assert [h["ranks"] for h in world["hosts"]] == [[0, 1], [2, 3, 4]], world["hosts"]
assert world["hosts"][1]["pmix_host"] == me + "-ddl1", world["hosts"]
assert world["ranks"][3]["keys"]["pmix.lrank"] == 1, world["ranks"][3]
assert world["ranks"][3]["env"]["DDL_RANK"] == "3" and world["ranks"][3]["env"]["DDL_LOCAL_SIZE"] == "3"
PY

# No libpmix on this machine (hidden in a mount namespace of its own):
# exit 2 naming what to install, nothing started.
if can_hide_libpmix; then
  expect_exit 2 without_libpmix "$DDL" run --mpi pmix --np 2 "$t/ring_c"
  expect_contains "$t/err" "--mpi pmix: ddl cannot host a PMIx server on this machine: OpenPMIx's library is not installed"
  expect_contains "$t/err" "apt-get install libpmix2"
  expect_not_contains "$t/out" "process"
fi

[[ -z $(ls -A "$TMPDIR") ]] || fail "left in TMPDIR: $(ls -A "$TMPDIR")"
echo PASS
