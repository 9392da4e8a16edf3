#!/usr/bin/env bash
# Env values reach the ranks byte for byte (-x and [job] env: spaces, quotes,
# $, backticks, newlines); --json gives JSON Lines events that parse and never
# show the token; --log-dir writes one file per rank and attempt.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

nasty=$'two  spaces "dq" \'sq\' $HOME `id` \\back\nnew line\ttab'
printf '%s' "$nasty" >"$t/want"
cat >"$t/job.toml" <<'TOML'
[job]
env = { FROM_FILE = "a \"quoted\" $HOME `id` \\ back\nline two" }
TOML
printf '%s' $'a "quoted" $HOME `id` \\ back\nline two' >"$t/want_file"
expect_exit 0 timeout -k 5 20 "$DDL" run "$t/job.toml" --np 2 -x "NASTY=$nasty" -- sh -c \
  "printf '%s' \"\$NASTY\" >$t/got.\$DDL_RANK; printf '%s' \"\$FROM_FILE\" >$t/file.\$DDL_RANK"
for r in 0 1; do
  cmp "$t/want" "$t/got.$r" || fail "-x value changed on the way to rank $r"
  cmp "$t/want_file" "$t/file.$r" || fail "[job] env value changed on the way to rank $r"
done

# --json: every line is one event; check their shapes with python.
expect_exit 3 timeout -k 5 20 "$DDL" run --np 2 --json -- sh -c \
  'echo "out $DDL_RANK"; echo "e $DDL_RANK" >&2; printf "bad \\377 byte\\n"; printf "q\"\\\\x"; [ $DDL_RANK = 0 ] || { sleep 0.3; exit 3; }'
python3 - "$t/out" <<'PY' || fail "bad --json events"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
kinds = [e["event"] for e in events]
assert all("time" in e for e in events), events
assert kinds.count("started") == 2 and kinds.count("exited") == 2, kinds
assert kinds[-1] == "summary", kinds
started = [e for e in events if e["event"] == "started"]
assert {e["rank"] for e in started} == {0, 1} and all(e["host"] == "localhost" and e["pid"] > 0 for e in started)
lines = {(e["rank"], e["stream"], e["line"]) for e in events if e["event"] == "output"}
assert (0, "stdout", "out 0") in lines and (1, "stdout", 'q"\\x') in lines, lines
assert (1, "stderr", "e 1") in lines, lines
assert (0, "stdout", "bad \ufffd byte") in lines, lines
exited = {e["rank"]: e for e in events if e["event"] == "exited"}
assert exited[1]["code"] == 3, exited
summary = events[-1]
assert summary["exit_code"] == 3 and summary["failed_rank"] == 1 and summary["result"] == "failed", summary
PY

# The job token reaches the ranks and never ddl's own output.
expect_exit 0 timeout -k 5 20 "$DDL" run --np 2 --json -- sh -c "printf %s \"\$DDL_TOKEN\" >$t/token.\$DDL_RANK"
token=$(cat "$t/token.0")
[[ ${#token} == 64 && $token == "$(cat "$t/token.1")" ]] || fail "ranks got no common DDL_TOKEN"
expect_not_contains "$t/out" "$token"
expect_not_contains "$t/err" "$token"

# --log-dir: DIR/rank-R.attempt-A.log, unprefixed lines of both streams.
expect_exit 5 timeout -k 5 20 "$DDL" run --np 2 --max-restarts 1 --log-dir "$t/logs" -- sh -c \
  'echo "out $DDL_RANK/$DDL_ATTEMPT"; echo "err $DDL_RANK" >&2; [ $DDL_RANK = 0 ] || { sleep 0.3; exit 5; }'
for r in 0 1; do
  for a in 0 1; do
    f="$t/logs/rank-$r.attempt-$a.log"
    [[ -f $f ]] || fail "missing $f"
    expect_contains "$f" "out $r/$a"
    expect_contains "$f" "err $r"
  done
done
[[ ! -e $t/logs/rank-0.attempt-2.log ]] || fail "a third attempt ran"
