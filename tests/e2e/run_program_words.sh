#!/usr/bin/env bash
# `ddl run` takes the program as mpirun does (issue 28): its options end at
# the first word that is neither one of run's options (nor its value) nor the
# JOB file; that word is the program, the rest is the program's, even a word
# ddl also spells (--np); "--" keeps working. Also --name (issue 29), and
# "did you mean" only for a word close to a real option.
source "$(dirname "$0")/common.inc"
python=$(command -v python3) || skip "python3 is not installed"
cat >"$t/x.py" <<'PY'
import os, sys
print("rank %s of %s: %s" % (os.environ["RANK"], os.environ["WORLD_SIZE"], " ".join(sys.argv[1:])))
PY

# The issue's line, without "--": python3's own -u stays python3's.
expect_exit 0 timeout 30 "$DDL" run --np 2 python3 -u "$t/x.py" --np 3 -v
for r in 0 1; do expect_contains "$t/out" "[$r] rank $r of 2: --np 3 -v"; done
expect_not_contains "$t/err" "unknown option"

# A job file before the program, options after it; "--" as before.
printf '[job]\ncommand = ["false"]\n' >"$t/job.toml"
expect_exit 0 timeout 30 "$DDL" run "$t/job.toml" --np 2 -x GREETING=hi sh -c 'echo "$GREETING from $DDL_RANK"'
expect_contains "$t/out" "[1] hi from 1"
expect_exit 0 timeout 30 "$DDL" run --np 1 -- sh -c 'echo dashes'
expect_contains "$t/out" "[0] dashes"
expect_exit 0 timeout 30 "$DDL" run -H localhost:2 sh -c 'echo "$DDL_WORLD_SIZE"'
expect_contains "$t/out" "[1] 2"
# A job file by another name: a file that is no program, or the word before "--".
printf '[job]\ncommand = ["echo", "from the job"]\n' >"$t/job.cfg"
expect_exit 0 timeout 30 "$DDL" run "$t/job.cfg" --np 1
expect_contains "$t/out" "[0] from the job"
expect_exit 2 timeout 30 "$DDL" run "$t/missing.cfg" --np 1 -- true
expect_contains "$t/err" "$t/missing.cfg: cannot read job file"
# --dry-run before the program is ddl's, after it the program's.
expect_exit 0 timeout 30 "$DDL" run --np 1 --dry-run echo --dry-run
expect_contains "$t/out" "echo --dry-run"

# An unknown option before the program: an error, no far-fetched hint.
expect_exit 2 timeout 10 "$DDL" run -u "$t/x.py"
expect_contains "$t/err" "ddl: error: unknown option '-u' for 'ddl run'"
expect_not_contains "$t/err" "did you mean"
expect_exit 2 timeout 10 "$DDL" run --dryrun true
expect_contains "$t/err" "ddl: error: unknown option '--dryrun' for 'ddl run'; did you mean '--dry-run'?"

# --name: the job's name in DDL_JOB (and ddl ps), not the file's stem.
expect_exit 0 timeout 30 "$DDL" run "$t/job.toml" --name resnet-7 --np 1 sh -c 'echo "job=$DDL_JOB $TORCHELASTIC_RUN_ID"'
expect_contains "$t/out" "[0] job=resnet-7 resnet-7"
expect_exit 2 timeout 10 "$DDL" run --name "" true
expect_contains "$t/err" "--name: must not be empty"

# -F/--ssh-config: read as ssh -F reads it; a missing file is an error.
expect_exit 2 timeout 10 "$DDL" hosts -H a -F "$t/no-such-config"
expect_contains "$t/err" "ddl: error: --ssh-config: cannot read '$t/no-such-config'"
printf 'Host alias-of-a\n  HostName 198.18.99.1\n  Port 2200\n' >"$t/ssh_config"
expect_exit 0 timeout 10 "$DDL" render -H alias-of-a --backend ssh --ssh-config "$t/ssh_config" --format env --rank 0 -- true
expect_contains "$t/out" "MASTER_ADDR=198.18.99.1"
expect_exit 0 timeout 10 "$DDL" render -H alias-of-a --backend ssh -F none --format env --rank 0 -- true
expect_contains "$t/out" "MASTER_ADDR=alias-of-a"

# No command at all: where to put one.
expect_exit 2 timeout 10 "$DDL" run --np 1
expect_contains "$t/err" "no command: give one in [job] command, or after the options: ddl run [JOB] [options] PROGRAM [args]"

# ddl's own options after the program go to it, as mpirun and torchrun do: a
# line on stderr says so before the ranks start (issue 41); not after "--".
expect_exit 0 timeout 10 "$DDL" run --np 2 sh -c 'echo "args: $*"' prog --dry-run --np=3
expect_contains "$t/err" "ddl: note: --dry-run, --np after the program goes to sh, not to ddl (as mpirun and torchrun do); put ddl's options before the program"
expect_contains "$t/out" "[1] args: --dry-run --np=3"
[[ $(grep -c "ddl: note:" "$t/err") == 1 ]] || fail "the note comes once: $(cat "$t/err")"
expect_exit 0 timeout 10 "$DDL" run --np 1 -- sh -c 'echo "args: $*"' prog --dry-run
expect_not_contains "$t/err" "ddl: note:"
expect_contains "$t/out" "[0] args: --dry-run"
