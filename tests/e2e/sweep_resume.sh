#!/usr/bin/env bash
# ddl sweep: kill -9 of ddl sweep leaves no trial process behind (each
# trial's `ddl run` dies with it, and its ranks with that); --resume skips the
# finished trials and reruns the unfinished ones, as the sweep began: the
# job file edited since changes nothing, and given again edited it is refused.
source "$(dirname "$0")/common.inc"
marker="ddl-sweep-resume-$$"
job=$t/resume.toml
cat >"$job" <<TOML
[job]
command = 'echo "{n}" >>"$t/ran"; if [ {n} -ge 2 ] && [ -e "$t/slow" ]; then sleep 30; fi; echo "loss={n}" # $marker'
[sweep]
method = "list"
metric = { name = "loss" }
[sweep.parameters]
n = [0, 1, 2, 3]
TOML
left() { pgrep -f -- "$marker" | wc -l; }
touch "$t/slow"
"$DDL" sweep "$job" -H localhost:2 --dir "$t/s" >"$t/out1" 2>"$t/err1" &
sweep=$!
# Trials 0 and 1 finish; 2 and 3 then sleep.
for _ in $(seq 200); do
  (( $(cat "$t/s/journal.jsonl" 2>/dev/null | grep -c '"final":true') >= 2 )) && (( $(left) >= 2 )) && break
  sleep 0.05
done
(( $(left) >= 2 )) || fail "trials 2 and 3 did not start: $(cat "$t/err1")"
kill -9 "$sweep"
wait "$sweep" 2>/dev/null || true
for _ in $(seq 100); do (( $(left) == 0 )) && break; sleep 0.05; done
(( $(left) == 0 )) || fail "processes left after kill -9 of ddl sweep: $(pgrep -af -- "$marker")"

# The job file edited since: given again, it is refused; without it the
# rest runs as the sweep began (loss={n}, not the edited loss=9{n}).
rm "$t/slow"
sed -i 's/echo "loss={n}"/echo "loss=9{n}"/' "$job"
expect_exit 2 "$DDL" sweep --resume "$t/s" "$job"
expect_contains "$t/err" "ddl: error: $job: the job file changed since this sweep began; resume without it"
expect_exit 2 "$DDL" sweep --resume "$t/s" -x EXTRA=1
expect_contains "$t/err" "the options -x, --timeout, --max-restarts, --backend and the command differ"
# Resume: only 2 and 3 run again, now quickly (the host options given again).
expect_exit 0 "$DDL" sweep --resume "$t/s" -H localhost:2 --json
python3 - "$t/out" "$t/ran" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert [(t["trial"], t["result"], t["metric"]) for t in doc["trials"]] == [(0, "ok", 0), (1, "ok", 1), (2, "ok", 2), (3, "ok", 3)], doc
ran = open(sys.argv[2]).read().split()
assert sorted(ran) == ["0", "1", "2", "2", "3", "3"], ran
PY
expect_contains "$t/s/journal.jsonl" '"event":"resumed","trials":2'
# The trials read the job as the sweep began, too.
expect_contains "$t/s/trial-0002/request.json" 'echo \"loss={n}\"'
expect_not_contains "$t/s/trial-0002/request.json" "loss=9"

# A crash mid-write leaves the journal's last line torn (no newline): the
# next --resume drops it, says so, and appends whole records after it, so
# that every later --resume reads the journal. (issue 27, item 9)
sed -i 's/n = \[0, 1, 2, 3\]/n = [0, 1]/' "$job"
expect_exit 0 "$DDL" sweep "$job" -H localhost:2 --dir "$t/torn"
size=$(stat -c %s "$t/torn/journal.jsonl")
truncate -s $((size - 10)) "$t/torn/journal.jsonl"
torn=$(( $(tail -n 1 "$t/torn/journal.jsonl" | wc -c) ))
expect_exit 0 "$DDL" sweep --resume "$t/torn" "$job"
expect_contains "$t/err" "ddl: warning: $t/torn/journal.jsonl:"
expect_contains "$t/err" ": dropped the torn last line ($torn bytes without a newline; a crash cut it)"
python3 - "$t/torn/journal.jsonl" <<'PY'
import json, sys
data = open(sys.argv[1], "rb").read()
assert data.endswith(b"\n"), data[-80:]
for number, line in enumerate(data.decode().splitlines(), 1):
    assert isinstance(json.loads(line), dict), (number, line)
PY
for _ in 1 2; do
  expect_exit 0 "$DDL" sweep --resume "$t/torn" "$job"
  expect_not_contains "$t/err" "dropped the torn"
done
