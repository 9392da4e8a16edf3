#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The team's environment on this machine (issue 31): the env file's values
# reach every rank and no command line; [job] env, env file, host_env and -x
# in that order; [host_env] per host in --dry-run; [job] setup before the
# program, its failure the rank's; [launch] bind / --bind pins each rank
# (Cpus_allowed_list) and sets OMP_NUM_THREADS; a host whose topology
# cannot be read is said once and runs unbound.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
cd "$t"

secret="top-${marker}-s3cr3t"
printf '# team settings\nexport SECRET="%s"\nORDER=file\nFILE_ONLY='"'"'a $b'"'"'\n' "$secret" >"$t/.env"

# The env file's values reach the ranks, and no process's argv shows them
# while the ranks run (they wait for $t/go).
cat >"$t/env.toml" <<EOF
[job]
command = ["sh", "-c", "printf '%s|%s|%s\\n' \"\$SECRET\" \"\$ORDER\" \"\$FILE_ONLY\" >$t/seen-\$DDL_RANK; while [ ! -e $t/go ]; do $nap 0.05; done"]
env_file = ".env"
env = { ORDER = "job" }
EOF
"$DDL" run "$t/env.toml" --np 2 >"$t/out" 2>"$t/err" &
ddl_pid=$!
for ((i = 0; i < 400; i++)); do
  (($(compgen -G "$t/seen-*" | wc -l) >= 2)) && break
  sleep 0.05
done
(($(compgen -G "$t/seen-*" | wc -l) >= 2)) || fail "the ranks never started: $(cat "$t/err")"
for cmdline in /proc/[0-9]*/cmdline; do
  if { tr '\0' ' ' <"$cmdline"; } 2>/dev/null | grep -qF -- "$secret"; then
    fail "the env file's value is on a command line: $(tr '\0' ' ' <"$cmdline")"
  fi
done
touch "$t/go"
wait "$ddl_pid" || fail "ddl failed: $(cat "$t/err")"
for r in 0 1; do
  [[ $(cat "$t/seen-$r") == "$secret|file|a \$b" ]] || fail "rank $r saw: $(cat "$t/seen-$r")"
done
echo "ok: the env file reached both ranks, on no command line"

# --dry-run shows where each value comes from, never the env file's value.
expect_exit 0 "$DDL" run "$t/env.toml" --np 1 --dry-run
expect_contains "$t/out" "SECRET='<from $t/.env>'"
expect_not_contains "$t/out" "$secret"

# The order: [job] env, env file, [host_env] (a later table wins), -x; per
# host in --dry-run. localhost and 127.0.0.1 are two hosts of this machine.
cat >"$t/order.toml" <<EOF
[job]
command = ["sh", "-c", "echo \"\$DDL_HOST \$ORDER \$ONLY_LOCAL\""]
env = { ORDER = "job" }
env_file = ".env"
[host_env."local*"]
ORDER = "host"
ONLY_LOCAL = "yes"
[host_env."localhost"]
ORDER = "host-exact"
EOF
expect_exit 0 "$DDL" run "$t/order.toml" -H localhost:1,127.0.0.1:1
expect_contains "$t/out" "localhost host-exact yes"
expect_contains "$t/out" "127.0.0.1 file "
expect_exit 0 "$DDL" run "$t/order.toml" -H localhost:1,127.0.0.1:1 -x ORDER=cli
expect_contains "$t/out" "localhost cli yes"
expect_contains "$t/out" "127.0.0.1 cli "
expect_exit 0 "$DDL" run "$t/order.toml" -H localhost:1,127.0.0.1:1 --dry-run
expect_contains "$t/out" "per-host env ([host_env], after [job] env and env_file):"
expect_contains "$t/out" '  localhost: "local*", "localhost"'
expect_contains "$t/out" "    ORDER=host-exact"
expect_contains "$t/out" "  127.0.0.1: no table matches"
echo "ok: job env, env file, host_env, -x in that order, per host in --dry-run"

# --env-file replaces [job] env_file; a bad line is exit 2 naming it.
printf 'ORDER=other\n' >"$t/other.env"
expect_exit 0 "$DDL" run "$t/order.toml" -H 127.0.0.1:1 --env-file "$t/other.env"
expect_contains "$t/out" "127.0.0.1 other "
printf 'ORDER=x\nnot a line\n' >"$t/bad.env"
expect_exit 2 "$DDL" run "$t/order.toml" -H 127.0.0.1:1 --env-file "$t/bad.env"
expect_contains "$t/err" "--env-file: $t/bad.env:2: not NAME=VALUE (no '='; the line is not shown: it may hold a secret)"
expect_not_contains "$t/err" "not a line"
# A NUL byte in a value: was cut locally (exit 0) and refused over ssh
# without the line (issue 40, item 8); now exit 2 with FILE:LINE for both.
printf 'ORDER=x\nSECRET=ab\0cd\n' >"$t/nul.env"
for where in localhost:1 127.0.0.1:1; do
  expect_exit 2 "$DDL" run "$t/order.toml" -H "$where" --env-file "$t/nul.env"
  expect_contains "$t/err" "--env-file: $t/nul.env:2: SECRET: the value holds a NUL byte, which no environment variable can"
done

# [job] setup: run before the program in the same shell, so what it sets
# reaches the program; its failure is the rank's, with its stderr.
cat >"$t/setup.toml" <<'EOF'
[job]
setup = "export FROM_SETUP=\"set up $DDL_RANK\"; cd /"
command = ["sh", "-c", "echo \"$FROM_SETUP in $(pwd)\""]
EOF
expect_exit 0 "$DDL" run "$t/setup.toml" --np 2
expect_contains "$t/out" "[1] set up 1 in /"
cat >"$t/setup_fails.toml" <<'EOF'
[job]
setup = "echo cannot activate >&2; exit 3"
command = ["sh", "-c", "echo the program ran"]
EOF
expect_exit 3 "$DDL" run "$t/setup_fails.toml" --np 1
expect_not_contains "$t/out" "the program ran"
expect_contains "$t/err" "cannot activate"
expect_contains "$t/err" "ddl: [job] setup failed (exit 3): echo cannot activate >&2; exit 3"
echo "ok: setup runs before the program; its failure is the rank's"

# bind: this machine's allowed CPUs, split in two for core; numa gives every
# rank its node's (one node here: all of them).
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
mapfile -t cpus < <(python3 -c "
import sys
out = []
for part in sys.argv[1].split(','):
    a, _, b = part.partition('-')
    out += range(int(a), int(b or a) + 1)
print(*out, sep='\n')" "$allowed")
((${#cpus[@]} >= 2)) || skip "bind needs 2 CPUs here, this process has $allowed"
half=$((${#cpus[@]} / 2))
share() { python3 -c "
import sys
c = [int(x) for x in sys.argv[1:]]
runs, i = [], 0
while i < len(c):
    j = i
    while j + 1 < len(c) and c[j + 1] == c[j] + 1: j += 1
    runs.append(str(c[i]) if i == j else f'{c[i]}-{c[j]}'); i = j + 1
print(','.join(runs))" "$@"; }
first=$(share "${cpus[@]:0:half}")
second=$(share "${cpus[@]:half}")
cat >"$t/bind.toml" <<'EOF'
[job]
command = ["sh", "-c", "echo \"$(grep Cpus_allowed_list /proc/self/status | tr -d '\\t') omp=$OMP_NUM_THREADS\""]
[launch]
bind = "core"
EOF
expect_exit 0 env -u OMP_NUM_THREADS "$DDL" run "$t/bind.toml" --np 2
expect_contains "$t/out" "[0] Cpus_allowed_list:$first omp=$half"
expect_contains "$t/out" "[1] Cpus_allowed_list:$second omp=$((${#cpus[@]} - half))"
expect_exit 0 env -u OMP_NUM_THREADS "$DDL" run "$t/bind.toml" --np 2 --dry-run
expect_contains "$t/out" "CPU binding (bind = core, from each host's topology):"
expect_contains "$t/out" "share 2 of 2 of the host's ${#cpus[@]} CPUs"
expect_exit 0 env -u OMP_NUM_THREADS "$DDL" run "$t/bind.toml" --np 2 --bind numa -x OMP_NUM_THREADS=5
expect_contains "$t/out" "[1] Cpus_allowed_list:$allowed omp=5"
expect_exit 0 env -u OMP_NUM_THREADS "$DDL" run "$t/bind.toml" --np 2 --bind gpu --dry-run --json
python3 -c "
import json, sys
doc = json.load(open('$t/out'))
assert all(r['cpus'] for r in doc['ranks']), doc['ranks']
" || fail "--dry-run --json has no cpus per rank: $(cat "$t/out")"
expect_exit 0 env -u OMP_NUM_THREADS "$DDL" run "$t/bind.toml" --np 2 --bind none
expect_contains "$t/out" "[0] Cpus_allowed_list:$allowed omp=1"
expect_exit 2 "$DDL" run "$t/bind.toml" --np 2 --bind socket
expect_contains "$t/err" "--bind: socket not in {none,core,numa,gpu}"
echo "ok: bind core/numa/gpu/none, OMP_NUM_THREADS, --dry-run per rank"

# A host whose topology cannot be read (here: its CPU list hidden) is said
# once and its ranks run unbound.
if [[ $(id -u) == 0 ]] && command -v unshare >/dev/null; then
  expect_exit 0 unshare -m sh -c 'mount --bind /dev/null /sys/devices/system/cpu/online && exec "$@"' sh \
    env -u OMP_NUM_THREADS "$DDL" run "$t/bind.toml" --np 2
  expect_contains "$t/err" "localhost: cannot read the CPU topology (/sys/devices/system/cpu/online is missing or unreadable); its ranks run unbound"
  [[ $(grep -c "cannot read the CPU topology" "$t/err") == 1 ]] || fail "said more than once: $(cat "$t/err")"
  expect_contains "$t/out" "[1] Cpus_allowed_list:$allowed omp=1"
  echo "ok: an unreadable topology is said once; the ranks run unbound"
fi
expect_none_left
