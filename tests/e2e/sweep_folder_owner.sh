#!/usr/bin/env bash
# A sweep folder, log folder or trial request that another local user
# prepared is refused, exit 2, naming the path and its owner (issue 40, item
# 1): root running `ddl sweep --dir` in a shared sticky folder never chmods,
# overwrites or appends through that user's symbolic links, never reads a
# request or journal from that user's folder, and the same for --log-dir and
# [job] log_dir. A sweep and --resume in a folder of root's own still work.
source "$(dirname "$0")/common.inc"
[[ $(id -u) == 0 ]] || { [[ ${CI:-} == true ]] && fail "runs as root under CI"; skip "needs root (a second user)"; }
other=ddltest2
id -u "$other" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$other" 2>/dev/null ||
  id -u "$other" >/dev/null  # another run made it meanwhile
uid=$(id -u "$other")
owner="uid $uid ($other)"
as_other() { runuser -u "$other" -- "$@"; }
chmod 755 "$t"
shared=$t/shared  # as /tmp: root's, sticky, everyone writes
mkdir -m 1777 "$shared"
# What the other user aims at: a folder and files of root's.
mkdir -m 755 "$t/rootdir"
printf 'root secret\n' >"$t/rootfile"
printf 'root log\n' >"$t/rootlog"
chmod 600 "$t/rootfile" "$t/rootlog"
untouched() {
  [[ $(stat -c %a "$t/rootdir") == 755 ]] || fail "the other user's link made root chmod $t/rootdir"
  [[ $(cat "$t/rootfile") == "root secret" && $(cat "$t/rootlog") == "root log" ]] ||
    fail "root's files were written through the other user's links: $(cat "$t/rootfile" "$t/rootlog")"
  [[ ! -e $t/ran ]] || fail "a trial or rank ran: $(cat "$t/ran")"
}
job=$t/sweep.toml
cat >"$job" <<TOML
[job]
command = 'echo "{n}" >>"$t/ran"; echo "loss={n}"'
[sweep]
method = "list"
metric = { name = "loss" }
[sweep.parameters]
n = [0, 1]
TOML
refused() {  # refused MESSAGE CMD...: exit 2, that message, nothing written or run
  local message=$1; shift
  expect_exit 2 "$@"
  expect_contains "$t/err" "ddl: error: $message"
  untouched
}

# The attack: the other user's folder, with links to root's folder and files.
d=$shared/D
as_other mkdir -m 777 "$d" "$d/trial-0000"
as_other ln -s "$t/rootdir" "$d/.ssh-broker"
as_other ln -s "$t/rootfile" "$d/trial-0000/request.json.tmp"
as_other ln -s "$t/rootlog" "$d/trial-0000/output.log"
refused "sweep folder $d is owned by $owner, not by you (uid 0 (root)); refusing" \
  "$DDL" sweep "$job" -H localhost:1 --dir "$d"
# A folder below it: the other user could swap what is in theirs.
refused "sweep folder $d/mine: $d is owned by $owner, not by you or root; refusing" \
  "$DDL" sweep "$job" -H localhost:1 --dir "$d/mine"
# A link to a folder of root's own, made by the other user.
as_other ln -s "$t/rootdir" "$shared/link"
refused "sweep folder $shared/link is a symbolic link owned by $owner; refusing" \
  "$DDL" sweep "$job" -H localhost:1 --dir "$shared/link"

# Root's own folder, but one everyone may write in (the links were made then).
r=$shared/R
mkdir -m 777 "$r"
chmod 777 "$r"
refused "sweep folder $r (owned by uid 0 (root)) can be written by others (mode 0777); refusing" \
  "$DDL" sweep "$job" -H localhost:1 --dir "$r"
as_other ln -s "$t/rootdir" "$r/.ssh-broker"
as_other mkdir -m 755 "$r/trial-0001"
mkdir -m 755 "$r/trial-0000"
chmod 777 "$r/trial-0000"
as_other ln -s "$t/rootfile" "$r/trial-0000/request.json.tmp"
as_other ln -s "$t/rootlog" "$r/trial-0000/output.log"
chmod 755 "$r" "$r/trial-0000"
# Root's folder now, but the other user's things are still in it.
refused "sweep folder $r/trial-0001 is owned by $owner, not by you (uid 0 (root)); refusing" \
  "$DDL" sweep "$job" -H localhost:1 --dir "$r"
rm -rf "$r/trial-0001" "$r/journal.jsonl"
refused "sweep file $r/trial-0000/request.json.tmp is a symbolic link owned by $owner; refusing" \
  "$DDL" sweep "$job" -H localhost:1 --dir "$r"
rm "$r/trial-0000/request.json.tmp" "$r/journal.jsonl"
refused "sweep file $r/trial-0000/output.log is a symbolic link owned by $owner; refusing" \
  "$DDL" sweep "$job" -H localhost:1 --dir "$r"
rm -rf "$r/trial-0000" "$r/journal.jsonl"
# Over ssh the session broker's folder (refused before any host is reached).
refused "sweep folder $r/.ssh-broker is a symbolic link owned by $owner; refusing" \
  "$DDL" sweep "$job" --backend ssh -H 127.0.0.1:1 --dir "$r"

# A sweep in a fresh folder of root's own, and --resume of it, still work.
mine=$shared/mine
expect_exit 0 "$DDL" sweep "$job" -H localhost:1 --dir "$mine"
[[ $(sort "$t/ran" | tr '\n' ' ') == "0 1 " ]] || fail "the trials did not run once each: $(cat "$t/ran")"
[[ $(stat -c %U:%a "$mine" "$mine/trial-0000") == $'root:755\nroot:755' ]] || fail "$(stat -c '%n %U %a' "$mine"/*)"
rm "$t/ran"
sed -i '/"final":true/{/"trial":1/d}' "$mine/journal.jsonl"
expect_exit 0 "$DDL" sweep --resume "$mine" -H localhost:1
[[ $(cat "$t/ran") == 1 ]] || fail "--resume did not rerun trial 1 alone: $(cat "$t/ran")"
rm "$t/ran"

# --resume of the other user's copy of that sweep, and a trial request in
# their folder: what it says would run as root.
as_other mkdir -m 755 "$shared/copy" "$shared/copy/trial-0000"
as_other cp "$mine/journal.jsonl" "$shared/copy/"
as_other cp "$mine/trial-0000/request.json" "$shared/copy/trial-0000/"
refused "sweep folder $shared/copy is owned by $owner, not by you (uid 0 (root)); refusing" \
  "$DDL" sweep --resume "$shared/copy" -H localhost:1
refused "trial folder $shared/copy/trial-0000: $shared/copy is owned by $owner, not by you or root; refusing" \
  "$DDL" run --trial "$shared/copy/trial-0000/request.json"
mkdir -m 755 "$shared/rc"
install -d -m 755 -o "$other" "$shared/rc/trial-0000"
as_other cp "$mine/trial-0000/request.json" "$shared/rc/trial-0000/"
refused "trial folder $shared/rc/trial-0000 is owned by $owner, not by you (uid 0 (root)); refusing" \
  "$DDL" run --trial "$shared/rc/trial-0000/request.json"
# ...and one the other user can write in a folder of root's.
cp "$shared/copy/trial-0000/request.json" "$mine/trial-0000/request.json"
chmod 666 "$mine/trial-0000/request.json"
refused "trial request $mine/trial-0000/request.json can be written by others (mode 0666); refusing" \
  "$DDL" run --trial "$mine/trial-0000/request.json"

# --log-dir and [job] log_dir: the same rules.
logs=$shared/logs
mkdir -m 755 "$logs"
chmod 777 "$logs"
as_other ln -s "$t/rootfile" "$logs/rank-0.attempt-0.log"
chmod 755 "$logs"
refused "log file $logs/rank-0.attempt-0.log is a symbolic link owned by $owner; refusing" \
  "$DDL" run --log-dir "$logs" -- sh -c "echo rank >>$t/ran"
# A file of the other user's left in it: neither truncated nor written.
chmod 777 "$logs"
rm "$logs/rank-0.attempt-0.log"
as_other sh -c "echo theirs >'$logs/rank-0.attempt-0.log'"
chmod 755 "$logs"
refused "log file $logs/rank-0.attempt-0.log is owned by $owner, not by you (uid 0 (root)); refusing" \
  "$DDL" run --log-dir "$logs" -- sh -c "echo rank >>$t/ran"
[[ $(cat "$logs/rank-0.attempt-0.log") == theirs ]] || fail "the other user's file was written"
refused "log folder $shared/link is a symbolic link owned by $owner; refusing" \
  "$DDL" run --log-dir "$shared/link" -- sh -c "echo rank >>$t/ran"
refused "log folder $d/logs: $d is owned by $owner, not by you or root; refusing" \
  "$DDL" run --log-dir "$d/logs" -- sh -c "echo rank >>$t/ran"
chmod 777 "$logs"
cat >"$t/logs.toml" <<TOML
[job]
log_dir = "$logs"
command = "echo rank >>$t/ran"
TOML
refused "log folder $logs (owned by uid 0 (root)) can be written by others (mode 0777); refusing" \
  "$DDL" run "$t/logs.toml"
# torch's error file in a log folder that was once open to others: the
# other user's link there is removed, never handed to a rank as
# TORCHELASTIC_ERROR_FILE, nor read back into the summary.
errs=$shared/errlogs
mkdir -m 777 "$errs"
as_other ln -s "$t/rootfile" "$errs/rank-0.attempt-0.error.json"
chmod 755 "$errs"
expect_exit 3 "$DDL" run --log-dir "$errs" -- sh -c \
  'printf "{\"message\":\"via rank\"}" >"$TORCHELASTIC_ERROR_FILE"; exit 3'
untouched
[[ ! -L $errs/rank-0.attempt-0.error.json ]] || fail "the other user's link was left as the rank's error file"
expect_contains "$t/err" "via rank"  # the rank's own file, written by it afresh
chmod 777 "$errs"
rm -f "$errs/rank-0.attempt-0.error.json"
as_other ln -s "$t/rootfile" "$errs/rank-0.attempt-0.error.json"
chmod 755 "$errs"
expect_exit 3 "$DDL" run --log-dir "$errs" -- sh -c 'exit 3'
untouched
expect_not_contains "$t/err" "root secret"

# Files named on the command line (ddl init FILE, bench --output_file) are
# written as `>` would, but never through another user's link.
as_other ln -s "$t/rootfile" "$shared/init.toml"
refused "file $shared/init.toml is a symbolic link owned by $owner; refusing" \
  "$DDL" init --template torch "$shared/init.toml" --force
as_other ln -s "$t/rootfile" "$shared/bench.json"
refused "--output_file $shared/bench.json is a symbolic link owned by $owner; refusing" \
  "$DDL" bench allreduce -H localhost:2 -b 8 -e 8 --output_file "$shared/bench.json"
expect_exit 0 "$DDL" init --template torch "$shared/mine.toml"
expect_exit 0 "$DDL" bench allreduce -H localhost:2 -b 8 -e 8 --output_file "$shared/mybench.json"
expect_contains "$shared/mybench.json" '"avg_busbw"'

# A log folder of root's own still works, made when missing.
expect_exit 0 "$DDL" run --log-dir "$shared/mylogs/a" -- echo hello
expect_contains "$shared/mylogs/a/rank-0.attempt-0.log" "hello"
echo "PASS"
