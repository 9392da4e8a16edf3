#!/usr/bin/env bash
# Issue 14: a host cut off from the launcher (its link down, its processes
# alive) never sends EOF to its shims; without the launcher's heartbeat they
# would run their ranks on for hours. ddl notices the lost connection and
# exits 3; the shims on the cut-off host, hearing no heartbeat for 10-15 s,
# end their ranks (TERM, grace, KILL) while the link is still down; after the
# link heals nothing of the job is left on any host.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2
mark="28.$$"   # `sleep 28.PID`: the ranks' marker
ns=${NETNS_HOSTS[1]}
{ cat "$NETNS_DIR/ssh.toml"; printf '[job]\ngrace = "1s"\n'; } >"$t/job.toml"

mkdir "$t/up"
timeout -k 5 50 ip netns exec "$NETNS_CLIENT" "$DDL" run "$t/job.toml" \
  -H "${NETNS_ADDRS[0]}:1,${NETNS_ADDRS[1]}:2" --backend ssh -- \
  sh -c 'touch "'"$t"'/up/$DDL_RANK"; sleep '"$mark" >"$t/out" 2>"$t/err" &
runner=$!
wait_files 3 "$t/up/*"
(($(netns_count 1 "sleep $mark") >= 2)) || fail "host 2 does not run its 2 ranks"

# Cut host 2 off: no FIN, no RST reaches either side.
ip -n "$ns" link set eth0 down
cut=$SECONDS
rc=0; wait "$runner" || rc=$?
[[ $rc == 3 ]] || { cat "$t/err"; fail "a cut-off host: exit $rc, want 3"; }
expect_contains "$t/err" "lost the connection to ${NETNS_ADDRS[1]}"
echo "ok: ddl exited 3 $((SECONDS - cut))s after the cut"
[[ $(netns_count 0 "sleep $mark") == 0 ]] || fail "host 1 kept its rank"

# Host 2, still cut off: its shims end their ranks on their own.
for _ in $(seq 250); do [[ $(netns_count 1 "sleep $mark") == 0 ]] && break; sleep 0.1; done
left=$(netns_count 1 "sleep $mark")
[[ $left == 0 ]] || fail "host 2 still runs $left ranks $((SECONDS - cut))s after the cut"
echo "ok: the cut-off host ended its ranks $((SECONDS - cut))s after the cut"

# Heal the link: nothing of the job comes back or is left, shims included.
ip -n "$ns" link set eth0 up
sleep 2
for i in 0 1; do
  [[ $(netns_count "$i" "sleep $mark") == 0 ]] || fail "host $((i + 1)) runs a rank after the heal"
  for _ in $(seq 50); do [[ $(netns_count "$i" __ddl_) == 0 ]] && break; sleep 0.1; done
  [[ $(netns_count "$i" __ddl_) == 0 ]] || fail "a shim is left on host $((i + 1))"
done
