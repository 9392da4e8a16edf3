#!/usr/bin/env bash
# Habits from mpirun, torchrun, horovodrun, pdsh and DeepSpeed: the job file
# wherever it stands, commands without "--", other launchers' spellings
# (mapped, or refused with ddl's), repeated hosts, logins, --include/--exclude,
# bare ddl.
source "$(dirname "$0")/common.inc"
cat >"$t/job.toml" <<'TOML'
[job]
command = ["true"]
TOML

# The job file after -H is the job, not a second host.
expect_exit 0 timeout 10 "$DDL" hosts -H a:2 "$t/job.toml" --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert [(x["name"], x["slots"]) for x in h] == [("a", 2)], h' "$t/out"
expect_exit 0 timeout 10 "$DDL" run -H localhost:2 "$t/job.toml" -x A=1 --dry-run
expect_contains "$t/out" "localhost"
expect_exit 0 timeout 10 "$DDL" render -H a:1 -H b:1 "$t/job.toml" --format hostfile
[[ $(cat "$t/out") == $'a slots=1\nb slots=1' ]] || { cat "$t/out"; fail "two -H"; }

# ddl run takes a command without "--", as mpirun does (run_program_words.sh);
# ddl sweep answers one with what to write instead.
expect_exit 0 timeout 10 "$DDL" run --dry-run echo train.py
expect_contains "$t/out" "echo train.py"
expect_exit 2 timeout 10 "$DDL" sweep python3 train.py
expect_contains "$t/err" "ddl: error: unexpected argument 'train.py': to run a command, put it after '--': ddl sweep [JOB] [options] -- python3 train.py"
expect_exit 2 timeout 10 "$DDL" hosts "$t/job.toml" extra
expect_contains "$t/err" "unexpected argument 'extra': 'ddl hosts' takes one JOB file"

# A typo in an option: did you mean.
expect_exit 2 timeout 10 "$DDL" run --hsots a -- true
expect_contains "$t/err" "ddl: error: unknown option '--hsots' for 'ddl run'; did you mean '--hosts'?"
expect_exit 2 timeout 10 "$DDL" bench allreduce --itres 3
expect_contains "$t/err" "unknown option '--itres' for 'ddl bench allreduce'; did you mean '--iters'?"

# mpirun's and horovodrun's spellings mean the same: mapped.
for np in -np -n --num-proc; do
  expect_exit 0 timeout 10 "$DDL" render "$np" 3 --format json
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["world_size"] == 3' "$t/out"
done
expect_exit 0 timeout 10 "$DDL" hosts --host a,b --json
python3 -c 'import json,sys; assert [h["name"] for h in json.load(open(sys.argv[1]))["hosts"]] == ["a","b"]' "$t/out"
expect_exit 0 timeout 10 "$DDL" hosts -host=a --json
printf 'm1 slots=2\n' >"$t/hostfile"
for flag in -hostfile --machinefile; do
  expect_exit 0 timeout 10 "$DDL" hosts "$flag" "$t/hostfile" --json
  expect_contains "$t/out" '"name":"m1"'
done
# bench's own -n (iterations) stays bench's.
expect_exit 2 timeout 10 "$DDL" bench allreduce -n x
expect_contains "$t/err" "--iters = x"
expect_not_contains "$t/err" "--np"

# torchrun's and DeepSpeed's per-node options: ddl run's spelling, and the
# personality that takes the whole line (ddl torchrun, ddl deepspeed).
expect_exit 2 timeout 10 "$DDL" run --nproc-per-node 4 train.py
expect_contains "$t/err" "ddl: error: --nproc-per-node is torchrun's ranks per host; with ddl run: -H HOST:N,HOST:N (this machine alone: --np N); \`ddl torchrun\` takes the whole torchrun line as it is"
expect_exit 2 timeout 10 "$DDL" run --nnodes=2 -- true
expect_contains "$t/err" "--nnodes is torchrun's node count; with ddl run: -H HOST:N,HOST:N or --hostfile FILE; \`ddl torchrun\`"
expect_exit 2 timeout 10 "$DDL" run --num_gpus 2 -- true
expect_contains "$t/err" "--num_gpus is DeepSpeed's ranks per host; with ddl run: -H HOST:N,HOST:N (this machine alone: --np N); \`ddl deepspeed\` takes the whole deepspeed line as it is"
expect_exit 2 timeout 10 "$DDL" run --master-port 29501 -- true
expect_contains "$t/err" "with ddl run: [torch] master_port in the job file"
# Nothing after "--" is looked at.
expect_exit 0 timeout 10 "$DDL" run --dry-run -- echo --nproc-per-node -np
expect_contains "$t/out" "--nproc-per-node -np"

# A host listed again gets more slots, as mpirun reads -H a,a,b.
expect_exit 0 timeout 10 "$DDL" hosts -H a,a,b,a:2 --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert [(x["name"], x["slots"]) for x in h] == [("a", 4), ("b", 1)], h' "$t/out"
expect_exit 2 timeout 10 "$DDL" hosts -H ml@a,a
expect_contains "$t/err" "ddl: error: host 'a' is listed twice with different logins (ml@a and a)"

# pdsh's user@host and ssh's port: shown, and only for the ssh backend.
expect_exit 0 timeout 10 "$DDL" hosts -H 'ml@gpu[1-2]:2222:4,b,op@[fe80::1]:22:1'
grep -qE '^gpu2 +ml@gpu2:2222 +4 ' "$t/out" || { cat "$t/out"; fail "login row"; }
grep -qE '^fe80::1 +op@\[fe80::1\]:22 +1 ' "$t/out" || { cat "$t/out"; fail "IPv6 login row"; }
expect_exit 0 timeout 10 "$DDL" hosts -H 'ml@gpu1:2222:4,b' --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert h[0] == {"name": "gpu1", "address": "gpu1", "slots": 4, "gpus": [], "source": "list", "user": "ml", "port": 2222}, h
assert list(h[1]) == ["name", "address", "slots", "gpus", "source"], h' "$t/out"
expect_exit 2 timeout 10 "$DDL" hosts -H 'a:0:2'
expect_contains "$t/err" "bad port '0' in 'a:0:2': 1 to 65535"
expect_exit 2 timeout 10 "$DDL" hosts -H '-x@a'
expect_contains "$t/err" "a user that starts with '-'"
expect_exit 2 timeout 10 "$DDL" run -H ml@localhost --backend local --dry-run -- true
expect_contains "$t/err" "ddl: error: host 'localhost' names an ssh login (ml@localhost), which backend local cannot use; use backend ssh"
expect_exit 0 timeout 10 "$DDL" render -H ml@localhost:2 --format plan -- true
expect_contains "$t/out" "auto: host 'localhost' names an ssh login"

# DeepSpeed's --include / --exclude: hosts and slot ids.
expect_exit 0 timeout 10 "$DDL" hosts -H a:4,b:4,c:2 --include 'a:1,3@c' --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert [(x["name"], x["slots"], x["gpus"]) for x in h] == [("a", 2, [1, 3]), ("c", 2, [])], h' "$t/out"
expect_exit 0 timeout 10 "$DDL" hosts -H 'n[1-3]:2' --exclude 'n2@n3:0' --json
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert [(x["name"], x["slots"], x["gpus"]) for x in h] == [("n1", 2, []), ("n3", 1, [1])], h' "$t/out"
expect_exit 0 timeout 10 "$DDL" render -H a:4 -i a:2,3 --format plan -- true
expect_contains "$t/out" "CUDA_VISIBLE_DEVICES"
expect_exit 0 timeout 10 "$DDL" render -H a:4 -i a:2,3 --format env --rank 1 -- true
expect_contains "$t/out" "CUDA_VISIBLE_DEVICES=3"
expect_exit 2 timeout 10 "$DDL" hosts -H a:2 --include a:2
expect_contains "$t/err" "ddl: error: --include: host 'a' has no slot 2 (its slots: 0,1)"
expect_exit 2 timeout 10 "$DDL" hosts -H a:2 --exclude z
expect_contains "$t/err" "ddl: error: --exclude: host 'z' is not among the job's hosts"
expect_exit 2 timeout 10 "$DDL" hosts -H a:2 --exclude a
expect_contains "$t/err" "ddl: error: --exclude a: no host is left"
expect_exit 2 timeout 10 "$DDL" hosts -H a:2 --include a --exclude a:1
expect_contains "$t/err" "--exclude: cannot be combined with --include"
expect_exit 2 timeout 10 "$DDL" hosts -H a:2 --include 'a:x'
expect_contains "$t/err" "--include: bad slot 'x' in 'a:x'"

# Bare ddl: the help.
expect_exit 0 timeout 10 "$DDL"
expect_contains "$t/out" "Subcommands:"
expect_contains "$t/out" "run"
