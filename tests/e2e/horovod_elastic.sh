#!/usr/bin/env bash
# Elastic Horovod under `ddl horovodrun` (issue 39), with real horovod.torch:
# hvd.elastic.run with --host-discovery-script and --min-np/--max-np, as
# ddl supports it (man: ddl horovodrun): the gang starts on the hosts the
# script prints, and a host lost mid-run is left out and the gang restarts
# on the hosts left (min_np met), where hvd.elastic.run starts again (ddl
# restarts processes; Horovod's in-process reset is not ddl's). With --mpi
# the elastic options are refused: elastic Horovod runs on Gloo.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(framework_python horovod.torch)
NETNS_NAMED=1 netns_up 3
cd "$t"
printf '#!/bin/sh\necho h1:1\necho h2:1\necho h3:1\n' >discover.sh
chmod +x discover.sh
script=$DDL_SOURCE_DIR/tests/fixtures/clients/horovod_elastic.py
hvd() {
  timeout -k 5 120 ip netns exec "$NETNS_CLIENT" "$DDL" horovodrun --job "$NETNS_DIR/ssh.toml" -np 3 --min-np 2 \
    --max-np 3 --host-discovery-script ./discover.sh "$python" "$script"
}

# --mpi with them: refused before anything starts (horovodrun would run Gloo).
expect_exit 2 timeout 10 "$DDL" horovodrun --mpi -np 3 --min-np 2 --host-discovery-script ./discover.sh "$python" "$script"
expect_contains "$t/err" "ddl: error: --mpi: elastic Horovod (--min-np, --max-np, --host-discovery-script) runs on Gloo, as horovodrun runs it; drop --mpi (ddl's Gloo restarts the gang on the hosts left), or the elastic options for one MPI world"

# Every host the script prints: 3 ranks run hvd.elastic.run to its end.
expect_exit 0 hvd
for r in 0 1 2; do expect_contains "$t/out" "[$r] rank $r of 3: hvd.elastic.run done at step 6 (attempt 0)"; done
echo "ok: hvd.elastic.run on the hosts of a discovery script"

# h3 dies at step 3: the gang restarts on h1 and h2 (2 ranks, min-np 2).
export READY=$t/ready STEPS=30 STEP_SECONDS=0.2
hvd >"$t/out" 2>"$t/err" &
runner=$!
wait_files 1 "$t/ready"
netns_crash_host 2
rc=0; wait "$runner" || rc=$?
[[ $rc == 0 ]] || { cat "$t/out" "$t/err"; fail "after losing h3: exit $rc, want 0"; }
for r in 0 1; do expect_contains "$t/out" "[$r] rank $r of 2: hvd.elastic.run done at step 30 (attempt 1)"; done
expect_contains "$t/err" "ddl: excluded host: h3"
echo "ok: a host lost mid-run: hvd.elastic.run again on the 2 hosts left"
