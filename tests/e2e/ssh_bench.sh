#!/usr/bin/env bash
# ddl bench allreduce over ssh on 4 namespace hosts (each with its own sshd,
# host key and hostname): the ranks run where the plan says (the rank lines
# name each machine's own hostname), every element is right across hosts with
# several streams, and a worker killed mid-sweep fails the whole bench with
# its signal's exit code and leaves no worker on any host.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 4
py=/usr/bin/python3
[[ -x $py ]] || py=python3
job=$NETNS_DIR/ssh.toml

# 8 ranks, 2 per host, 2 streams per neighbour; int32 max and float sum, sizes
# not divisible by the rank count. The sweep crosses all three algorithms:
# recursive doubling (up to 49152), halving-doubling (393216), the ring (3M).
expect_exit 0 ddl_ssh bench allreduce "$job" -H "$(netns_hostspec 2)" --backend ssh \
  --streams 2 -d int32 -o max -b 12 -e 3M -f 8 -n 2 -w 1 -J "$t/max.json"
expect_contains "$t/out" "transport tcp, 8 ranks on 4 hosts: $(IFS=,; echo "${NETNS_ADDRS[*]}" | sed 's/,/, /g')"
expect_contains "$t/out" "# tcp: ring over TCP, 2 stream(s) per neighbour, 1024 KiB segments; recursive doubling up to 64 KiB; halving-doubling up to 1024 KiB"
for r in 0 1 2 3 4 5 6 7; do
  grep -qE "^#  Rank +$r Group  0 Pid +[0-9]+ on +h$((r / 2 + 1)) device -1 \[cpu\] tcp$" "$t/out" ||
    fail "rank $r is not on h$((r / 2 + 1)): $(grep '#  Rank' "$t/out")"
done
"$py" - "$t/max.json" <<'PY' || fail "bad results: $(cat "$t/out")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["transport"] == "tcp" and doc["world_size"] == 8, doc
sizes = [r["size"] for r in doc["results"]]
assert sizes == [12, 96, 768, 6144, 49152, 393216, 3145728], sizes
for r in doc["results"]:
    assert r["type"] == "int32" and r["redop"] == "max", r
    assert r["out_of_place"]["wrong"] == 0 and r["in_place"]["wrong"] == 0, r
PY

expect_exit 0 ddl_ssh bench allreduce "$job" -H "$(netns_hostspec 1)" --backend ssh \
  -b 1000004 -e 1000004 -n 2 -w 1 --json
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["results"][0]
assert d["world_size"] == 4 and r["size"] == 1000004 and r["out_of_place"]["wrong"] == 0 and r["in_place"]["wrong"] == 0, d' \
  "$t/out" || fail "float sum over 4 hosts: $(cat "$t/out")"

# A worker killed mid-sweep on host 3: the gang ends, ddl exits 137 and names
# the rank, no worker is left anywhere.
DDL_TIMEOUT=120 ddl_ssh bench allreduce "$job" -H "$(netns_hostspec 1)" --backend ssh \
  -b 64M -e 64M -n 1000 -w 0 -c 0 >"$t/out" 2>"$t/err" &
runner=$!
tries=0
until [[ $(netns_count 2 "ddl worker allreduce") == 1 && $(netns_count_all "ddl worker allreduce") == 4 ]]; do
  ((++tries < 400)) || fail "the 4 workers did not start: $(cat "$t/err")"
  sleep 0.05
done
sleep 1
for pid in $(ip netns pids "${NETNS_HOSTS[2]}"); do
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "ddl worker allreduce"; then kill -9 "$pid"; fi
done
rc=0; wait "$runner" || rc=$?
[[ $rc == 137 ]] || fail "exit $rc after a worker was killed, want 137: $(cat "$t/err")"
expect_contains "$t/err" "ddl: error: rank 2 on ${NETNS_ADDRS[2]} was killed by SIGKILL"
tries=0
until [[ $(netns_count_all "ddl worker allreduce") == 0 ]]; do
  ((++tries < 100)) || fail "workers left after the bench failed: $(netns_count_all "ddl worker allreduce")"
  sleep 0.1
done
