#!/usr/bin/env bash
# Horovod's HTTP rendezvous has no credentials (Horovod's client sends none),
# so ddl's answers only the ranks' hosts and bounds what one address can
# hold. A process on a rank's host that holds 70 half-sent requests does not
# lock the ranks out (its oldest unfinished requests are closed); a host
# outside the job gets 403 for GET, PUT and DELETE and cannot lock them out
# either. The ranks run the suite's PROTOCOL CLIENT
# (tests/fixtures/clients/horovod_http_client.py, NOT Horovod); the hostile
# peer is tests/fixtures/clients/horovod_abuser.py. (issue 27, item 4)
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
python=$(command -v python3) || skip "python3 is not installed (scripts/deps.sh installs it)"
clients=$DDL_SOURCE_DIR/tests/fixtures/clients

# Each rank: writes where the rendezvous is, waits for the abuser to hold its
# connections, then runs the protocol client. Local rank 0 starts the local abuser.
cat >"$t/rank.sh" <<SH
#!/bin/sh
echo "\$HOROVOD_GLOO_RENDEZVOUS_ADDR \$HOROVOD_GLOO_RENDEZVOUS_PORT" >"$t/where.\$HOROVOD_RANK"
if [ "\$1" = local ] && [ "\$HOROVOD_RANK" = 0 ]; then
  "$python" "$clients/horovod_abuser.py" hold "\$HOROVOD_GLOO_RENDEZVOUS_ADDR" "\$HOROVOD_GLOO_RENDEZVOUS_PORT" 70 \
    "$t/holding" "$t/done" "$marker" &
fi
i=0
while [ ! -s "$t/holding" ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done
[ -s "$t/holding" ] || { echo "no abuser holds connections" >&2; exit 9; }
"$python" "$clients/horovod_http_client.py"
rc=\$?
touch "$t/done"
exit \$rc
SH
chmod +x "$t/rank.sh"

# run_job MODE CMD...: the job in the background (finish_job waits for it).
run_job() {
  local mode=$1; shift
  rm -f "$t/holding" "$t/done" "$t"/where.*
  cat >"$t/job.toml" <<TOML
[job]
frameworks = ["horovod"]
command = ["$t/rank.sh", "$mode"]
grace = "2s"
[rendezvous]
timeout = "45s"
TOML
  if [[ $mode == netns ]]; then cat "$NETNS_DIR/ssh.toml" >>"$t/job.toml"; fi
  "$@" >"$t/out" 2>"$t/err" &
  echo $! >"$t/ddl.pid"
}

# finish_job MODE START: exit 0, every rank through, how long it took.
finish_job() {
  local mode=$1 start=$2 got=0 end
  wait "$(cat "$t/ddl.pid")" || got=$?
  end=$(date +%s.%N)
  touch "$t/done"
  [[ $got == 0 ]] || { cat "$t/out" "$t/err"; fail "$mode: exit $got, want 0"; }
  for r in 0 1; do expect_contains "$t/out" "[$r] rank $r: global 2 ranks"; done
  awk -v a="$start" -v b="$end" -v m="$mode" 'BEGIN { printf "%s: the ranks rendezvoused in %.2fs under abuse\n", m, b - a }' >&2
}

# 1. Local ranks; the abuser on this machine holds 70 half-sent requests.
start=$(date +%s.%N)
run_job local timeout -k 5 60 "$DDL" run "$t/job.toml" --np 2
finish_job local "$start"
expect_none_left 5

# 2. Ranks on two namespace hosts over ssh; a third host is not in the job.
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 3
stranger=${NETNS_HOSTS[2]}
start=$(date +%s.%N)
run_job netns ddl_ssh run "$t/job.toml" -H "${NETNS_ADDRS[0]}:1,${NETNS_ADDRS[1]}:1" --backend ssh
wait_files 1 "$t/where.0"
read -r addr port <"$t/where.0"
ip netns exec "$stranger" "$python" "$clients/horovod_abuser.py" probe "${addr//[\[\]]/}" "$port" >"$t/probe"
for method in GET PUT DELETE; do
  grep -qE "^$method (403|closed)$" "$t/probe" || { cat "$t/probe"; fail "a host outside the job: $method was not refused"; }
done
ip netns exec "$stranger" "$python" "$clients/horovod_abuser.py" hold "${addr//[\[\]]/}" "$port" 100 \
  "$t/holding" "$t/done" "$marker" &
finish_job netns "$start"
expect_contains "$t/err" "refused a connection from ${NETNS_ADDRS[2]}: not the address of a host of this job's ranks"
expect_none_left 5
echo ok
