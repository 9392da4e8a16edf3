#!/usr/bin/env bash
# `ddl mpirun` (issue 29): Open MPI mpirun command lines run unchanged after
# `ddl`, through the mpirun backend (one MPI world) with ddl's supervision:
# mpi4py's documented `mpiexec -n 5 python -m mpi4py.bench helloworld`, and a
# C program built with mpicc (Open MPI's ring example), on this machine; -x,
# --mca and the refused options. The namespace hosts: persona_netns.sh.
source "$(dirname "$0")/common.inc"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
mpicc -O1 -o "$t/ring_c" "$DDL_SOURCE_DIR/tests/fixtures/mpi/ring.c"
mpirun_() { timeout -k 5 120 "$DDL" mpirun "$@"; }

# Open MPI's ring, four ranks: one world of 4, never four worlds of 1.
expect_exit 0 mpirun_ -np 4 "$t/ring_c"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] process $r of 4 on"; done
expect_contains "$t/out" "[0] process 0 passed 3 messages"
expect_contains "$t/out" "[3] process 3 passed 4 messages"
expect_not_contains "$t/out" "of 1 on"
# Open MPI's own spellings: -n, -c, --host, -host with slots, -wdir.
expect_exit 0 mpirun_ -n 2 -host localhost:2 -wdir "$t" ./ring_c
expect_contains "$t/out" "[1] process 1 of 2 on"
expect_exit 0 mpirun_ -c 3 "$t/ring_c"
expect_contains "$t/out" "[2] process 2 of 3 on"

# mpi4py's documented line (python3 -m mpi4py.bench helloworld).
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import mpi4py" 2>/dev/null; then python=$(command -v "$candidate"); break; fi
done
if [[ -n $python ]]; then
  expect_exit 0 mpirun_ -n 5 "$python" -m mpi4py.bench helloworld
  for r in 0 1 2 3 4; do expect_contains "$t/out" "[$r] Hello, World! I am process $r of 5 on"; done
  # -x NAME passes ddl's value, -x NAME=VALUE sets one.
  MY_VAR=from-ddl expect_exit 0 mpirun_ -np 2 -x MY_VAR -x OTHER="a b" "$python" -c \
    'import os; from mpi4py import MPI; print(MPI.COMM_WORLD.Get_rank(), os.environ["MY_VAR"], os.environ["OTHER"])'
  expect_contains "$t/out" "[1] 1 from-ddl a b"
else
  echo "mpi4py is not importable: its lines are skipped (scripts/deps.sh installs python3-mpi4py)" >&2
fi

# --mca reaches mpirun itself: a btl that does not exist ends the job.
expect_exit 0 mpirun_ --dry-run -np 2 --mca btl self,vader,tcp --bind-to none "$t/ring_c"
# The mpirun command line, one quoted word a line: as one line of words.
sed -e 's/^ *//' -e 's/ \\$//' "$t/out" | tr '\n' ' ' >"$t/words"
expect_contains "$t/words" "--mca btl self,vader,tcp --bind-to none -x "
expect_exit 0 mpirun_ -np 2 --mca btl self,vader,tcp "$t/ring_c"
expect_contains "$t/out" "[1] process 1 of 2 on"
rc=0; mpirun_ -np 2 --mca btl no_such_btl "$t/ring_c" >"$t/out" 2>"$t/err" || rc=$?
[[ $rc != 0 ]] || { cat "$t/err"; fail "--mca btl no_such_btl did not reach mpirun"; }
# -x of a name ddl does not have: mpirun's warning, and the job goes on.
expect_exit 0 mpirun_ -np 1 -x NO_SUCH_VARIABLE_HERE "$t/ring_c"
expect_contains "$t/err" "ddl: warning: -x NO_SUCH_VARIABLE_HERE: not in ddl's environment"

# Refused: exit 2 and why.
refused() {
  local want=$1; shift
  expect_exit 2 timeout 10 "$DDL" mpirun "$@"
  expect_contains "$t/err" "ddl: error: $want"
}
refused "--map-by seq: is not in ddl's plan: use --map-by slot, node, core or ppr:N:node, or -N N" --map-by seq -np 2 ./a
refused "-map-by socket:SPAN: is not in ddl's plan" -map-by socket:SPAN -np 2 ./a
refused "mpirun's ':' (several programs in one job) is not ddl's" -np 1 ./a : -np 1 ./b
refused "-V: ddl is not Open MPI: run mpirun --version" -V
refused "unknown option '--hostfle' for 'ddl mpirun'; did you mean '--hostfile'?" --hostfle h ./a
refused "no program: ddl mpirun [options] PROGRAM [args]" -np 2
expect_exit 0 "$DDL" mpirun --help
expect_contains "$t/out" "mpirun's options (Open MPI 4.1"
