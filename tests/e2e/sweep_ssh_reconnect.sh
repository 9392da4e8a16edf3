#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sweep's session broker (issue 32) makes a host's connection again once
# when it dies mid-sweep: the trial running there fails naming the lost
# connection, its retry and the trials after run over one new connection.
# When that one dies too, the host is lost: the trials after fail, saying so.
# Counted on the host (NETNS_COUNT_SHELLS).
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
NETNS_COUNT_SHELLS=1 netns_up 1
a=("${NETNS_ADDRS[@]}")
# The broker's connection to h1 dies while trial 1 runs there, and again
# while trial 3 does.
cat >"$t/slow.toml" <<TOML
$(cat "$NETNS_DIR/ssh.toml")
[job]
command = 'if [ {i} = 1 -o {i} = 3 ] && [ ! -e $t/dropped{i} ]; then touch $t/mid{i}; sleep 20; fi; echo "trial {i} done"'
[sweep]
method = "list"
retries = 1
[sweep.parameters]
i = [0, 1, 2, 3, 4]
TOML
drop_h1() {
  local pid
  wait_files 1 "$t/mid$1"
  touch "$t/dropped$1"
  for pid in $(ip netns pids "${NETNS_HOSTS[0]}"); do
    case $( { tr "\0" " " <"/proc/$pid/cmdline"; } 2>/dev/null) in
      *"[listener]"*) ;;
      "sshd: "*) kill -9 "$pid" ;;
    esac
  done
}
(drop_h1 1; drop_h1 3) &
expect_exit 1 ddl_ssh sweep "$t/slow.toml" -H "${a[0]}:1" --backend ssh --dir "$t/s3"
wait
[[ $(netns_handshakes 0) == 2 ]] || fail "h1: $(netns_handshakes 0) connections, want 2 (made again once)"
expect_contains "$t/s3/trial-0001/output.log" "lost the connection to ${a[0]}"
for i in 0 1 2; do expect_contains "$t/s3/trial-000$i/output.log" "[0] trial $i done"; done
expect_contains "$t/s3/trial-0003/output.log" "lost the connection to ${a[0]}"
expect_contains "$t/s3/trial-0004/output.log" "${a[0]}: the connection is lost (made again once already)"
python3 - "$t/s3" <<'PY'
import json, sys
for i, want in enumerate(["ok", "ok", "ok", "launch_error", "launch_error"]):
    result = json.load(open(f"{sys.argv[1]}/trial-000{i}/result.json"))
    assert result["reason"] == want, (i, result)
PY
[[ $(netns_count 0 "sleep 20") == 0 ]] || fail "trial 1's rank is left on h1"
echo PASS
