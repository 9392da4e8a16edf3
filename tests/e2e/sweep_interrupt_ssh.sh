#!/usr/bin/env bash
# ddl sweep: Ctrl-C (SIGINT) stops every trial on every host, leaves no
# process behind, exits 130, and the journal marks the trials interrupted.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2
marker="ddl-sweep-int-$$"
job=$t/int.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
[job]
command = 'echo started {n}; sleep 60 # $marker'
[sweep]
[sweep.parameters]
n = [0, 1, 2, 3, 4, 5]
TOML
ddl_ssh sweep "$job" -H "$(netns_hostspec 2)" --backend ssh --dir "$t/s" >"$t/out" 2>"$t/err" &
sweep=$!
for _ in $(seq 200); do (( $(netns_count_all "$marker") >= 4 )) && break; sleep 0.05; done
(( $(netns_count_all "$marker") >= 4 )) || fail "4 trials did not start: $(cat "$t/err")"
# SIGINT to ddl sweep itself (not timeout or ip netns exec in front of it).
for pid in $(pgrep -f -- "sweep $job -H"); do
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == ddl ]] && kill -INT "$pid"
done
got=0; wait "$sweep" || got=$?
[[ $got == 130 ]] || fail "expected exit 130, got $got: $(cat "$t/err")"
(( $(netns_count_all "$marker") == 0 )) || fail "workers left on the hosts"
[[ -z $(pgrep -f -- "$t/s/trial-") ]] || fail "trial launchers left: $(pgrep -af -- "$t/s/trial-")"
expect_contains "$t/err" "ddl: warning: SIGINT: stopping every trial"
[[ $(grep -c '"result":"interrupted"' "$t/s/journal.jsonl") == 4 ]] || fail "expected 4 interrupted trials: $(cat "$t/s/journal.jsonl")"
[[ $(grep -c '"event":"started"' "$t/s/journal.jsonl") == 4 ]] || fail "a trial started after Ctrl-C"
expect_contains "$t/s/journal.jsonl" '"event":"end","exit_code":130'
