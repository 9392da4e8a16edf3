#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ddl's stdin reaches rank 0 (--stdin R|all|none, as mpirun --stdin and srun
# --input; issue 41): on the local backend, through mpirun (backend mpirun),
# and over ssh (the shim's "in N" frames, with and without ddl's relay) on the
# namespace hosts; the other ranks read EOF; a rank outside the job is refused.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
reader='if read a && read b; then echo "rank $DDL_RANK read $a $b"; else echo "rank $DDL_RANK read EOF"; fi'
run() { timeout -k 5 60 "$DDL" run "$@"; }

# check WHO...: rank W read the two lines for W in WHO, every other of 0..n-1 EOF.
n=4
check() {
  local r
  for ((r = 0; r < n; r++)); do
    if [[ " $* " == *" $r "* ]]; then expect_contains "$t/out" "[$r] rank $r read 100000 0"
    else expect_contains "$t/out" "[$r] rank $r read EOF"; fi
  done
}

# Local: rank 0 by default, every rank with all, none with none, rank 2.
printf '100000\n0\n' | expect_exit 0 run --np 4 sh -c "$reader"
check 0
printf '100000\n0\n' | expect_exit 0 run --np 4 --stdin all sh -c "$reader"
check 0 1 2 3
printf '100000\n0\n' | expect_exit 0 run --np 4 --stdin none sh -c "$reader"
check
printf '100000\n0\n' | expect_exit 0 run --np 4 --stdin 2 sh -c "$reader"
check 2
# More than a pipe holds, byte for byte.
head -c 300000 /dev/urandom >"$t/big"
expect_exit 0 run --np 2 sh -c 'if [ "$DDL_RANK" = 0 ]; then cksum; fi' <"$t/big"
expect_contains "$t/out" "[0] $(cksum <"$t/big")"
# A rank outside the job, or a word that is none: usage errors, nothing runs.
expect_exit 2 run --np 4 --stdin 5 --dry-run true
expect_contains "$t/err" "--stdin: rank 5 is not in this job of 4 ranks (0-3)"
expect_exit 2 run --np 4 --stdin some true
expect_contains "$t/err" "--stdin: expected a rank, all or none, not 'some'"
# backend mpirun: mpirun's own --stdin carries it, as `ddl mpirun` gives it.
if command -v mpirun >/dev/null; then
  printf '100000\n0\n' | expect_exit 0 run -H localhost:4 --backend mpirun -- sh -c "$reader"
  check 0
  # Open MPI 4.1's --stdin all delivers nothing and never ends: refused.
  expect_exit 2 run -H localhost:4 --backend mpirun --stdin all -- sh -c "$reader"
  expect_contains "$t/err" "--stdin all: mpirun does not give every rank its stdin"
  printf '100000\n0\n' | expect_exit 0 timeout -k 5 60 "$DDL" mpirun -H localhost:4 -np 4 sh -c "$reader"
  check 0
  printf '100000\n0\n' | expect_exit 0 timeout -k 5 60 "$DDL" mpirun -H localhost:4 -np 4 --stdin 1 sh -c "$reader"
  check 1
fi

# ssh on the namespace hosts: two ranks per host run under ddl's relay (ddl
# is there), one rank per host on a channel of its own.
netns_up 2
a=("${NETNS_ADDRS[@]}")
cat "$NETNS_DIR/ssh.toml" >"$t/job.toml"
printf '\n[job]\ncommand = "%s"\n' "${reader//\"/\\\"}" >>"$t/job.toml"
for slots in 2 1; do
  n=$((2 * slots))
  hosts="${a[0]}:$slots,${a[1]}:$slots"
  printf '100000\n0\n' | DDL_TIMEOUT=60 expect_exit 0 ddl_ssh run -v -H "$hosts" "$t/job.toml"
  check 0
  if ((slots == 2)); then expect_contains "$t/err" "running ddl's relay"; fi
  printf '100000\n0\n' | DDL_TIMEOUT=60 expect_exit 0 ddl_ssh run -H "$hosts" --stdin all "$t/job.toml"
  check 0 1 2 3
  printf '100000\n0\n' | DDL_TIMEOUT=60 expect_exit 0 ddl_ssh run -H "$hosts" --stdin none "$t/job.toml"
  check
  printf '100000\n0\n' | DDL_TIMEOUT=60 expect_exit 0 ddl_ssh run -H "$hosts" --stdin $((n - 1)) "$t/job.toml"
  check $((n - 1))
done
# More than one frame, byte for byte, to a remote rank.
DDL_TIMEOUT=60 expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "${a[1]}:1" sh -c cksum <"$t/big"
expect_contains "$t/out" "[0] $(cksum <"$t/big")"
echo PASS
