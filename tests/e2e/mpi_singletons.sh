#!/usr/bin/env bash
# MPI programs never run as N silent one-rank worlds (issue 28), on this
# machine: a program that links an MPI library (Open MPI's ring built with
# mpicc, MPICH's with mpicc.mpich) makes `auto` pick mpirun and says why, and
# an explicit local backend with more than one rank is exit 2 with what to
# write instead; where ddl cannot see MPI (mpi4py, a wrapper script), every
# rank of a job of more than one gets the singleton guard, MPI_Init refuses,
# and the summary's one line says why. One rank stays a valid singleton.
# The namespace hosts over ssh: mpi_singletons_netns.sh.
source "$(dirname "$0")/common.inc"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
cd "$t"
mpicc -O1 -o ring_c "$DDL_SOURCE_DIR/tests/fixtures/mpi/ring.c"
printf 'int main(void) { return 0; }\n' >plain.c
cc -o plain plain.c
printf '#!/bin/sh\nexec "%s" "$@"\n' "$t/ring_c" >ring.sh
chmod +x ring.sh
run_() { timeout -k 5 120 "$DDL" run "$@"; }

# Seen before the launch: auto takes mpirun, --dry-run says so and why.
expect_exit 0 run_ --np 2 --dry-run ./ring_c
expect_contains "$t/out" "backend mpirun (auto: ./ring_c links the MPI library libmpi.so.40, and mpirun makes its ranks one MPI job)"
expect_exit 0 run_ --np 2 --dry-run ./plain
expect_contains "$t/out" "backend local (auto: every host is this machine)"
# Found on PATH as the launcher sees it.
PATH="$t:$PATH" expect_exit 0 run_ --np 2 --dry-run ring_c
expect_contains "$t/out" "backend mpirun (auto: $t/ring_c links the MPI library libmpi.so.40"
# And it runs as one world of 2.
expect_exit 0 run_ --np 2 ./ring_c
expect_contains "$t/out" "[1] process 1 of 2 on"
expect_not_contains "$t/out" "of 1 on"

# An explicit local backend with two ranks: exit 2, why, and what to write.
expect_exit 2 run_ --np 2 --backend local ./ring_c
expect_contains "$t/err" "ddl: error: ./ring_c links the MPI library libmpi.so.40: backend local would start its 2 ranks as 2 one-rank MPI jobs (MPI singletons) that never form one MPI_COMM_WORLD; use --backend mpirun (or auto, which picks it), frameworks = [\"mpi\"], or --mpi pmix"
# One rank is a valid singleton, and a program without MPI is no concern.
expect_exit 0 run_ --np 1 --backend local ./ring_c
expect_contains "$t/out" "[0] process 0 of 1 on"
expect_exit 0 run_ --np 2 --backend local ./plain

hint="write --backend mpirun, or frameworks = [\"mpi\"] in [job]"
# Hidden behind a script, ddl cannot see MPI: the guard makes MPI_Init refuse.
expect_exit 1 run_ --np 2 --backend local ./ring.sh
expect_contains "$t/err" "is an MPI program that ddl started without an MPI launcher (it would have been one of 2 one-rank MPI worlds, so MPI_Init refused): $hint"
expect_not_contains "$t/out" "of 1 on"
expect_exit 0 run_ --np 1 --backend local ./ring.sh
expect_contains "$t/out" "[0] process 0 of 1 on"
# The user's own value wins (here: an empty one, a plain singleton again).
expect_exit 0 run_ --np 2 --backend local -x OMPI_MCA_ess_singleton_server=/dev/null --dry-run ./ring.sh
expect_contains "$t/out" "OMPI_MCA_ess_singleton_server=/dev/null"
expect_not_contains "$t/out" "ddl-started-this-rank-without-mpirun"

# mpi4py, which no ELF check can see.
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import mpi4py" 2>/dev/null; then python=$(command -v "$candidate"); break; fi
done
if [[ -n $python ]]; then
  expect_exit 1 run_ --np 2 "$python" -m mpi4py.bench helloworld
  expect_contains "$t/err" "$hint"
  expect_not_contains "$t/out" "of 1 on"
  expect_exit 0 run_ --np 1 "$python" -m mpi4py.bench helloworld
  expect_contains "$t/out" "[0] Hello, World! I am process 0 of 1 on"
  expect_exit 0 run_ --np 2 --backend mpirun "$python" -m mpi4py.bench helloworld
  expect_contains "$t/out" "[1] Hello, World! I am process 1 of 2 on"
else
  echo "mpi4py is not importable: its lines are skipped (scripts/deps.sh installs python3-mpi4py)" >&2
fi

# MPICH: its library is seen, and its singleton refuses under the guard too.
if have mpicc.mpich mpich; then
  mpicc.mpich -O1 -o ring_mpich "$DDL_SOURCE_DIR/tests/fixtures/mpi/ring.c"
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$t/ring_mpich" >ring_mpich.sh
  chmod +x ring_mpich.sh
  expect_exit 0 run_ --np 2 --dry-run ./ring_mpich
  expect_contains "$t/out" "backend mpirun (auto: ./ring_mpich links the MPI library libmpich.so.12"
  expect_exit 2 run_ --np 2 --backend local ./ring_mpich
  expect_contains "$t/err" "links the MPI library libmpich.so.12: backend local would start its 2 ranks"
  rc=0; run_ --np 2 --backend local ./ring_mpich.sh >"$t/out" 2>"$t/err" || rc=$?
  [[ $rc != 0 ]] || fail "MPICH ranks ran as singletons under the guard"
  expect_contains "$t/err" "$hint"
  expect_not_contains "$t/out" "of 1 on"
  # [mpirun] flavour = "mpich": Hydra's own spellings, one world of 3.
  printf '[mpirun]\nflavour = "mpich"\nargs = ["-bind-to", "none"]\n' >mpich.toml
  expect_exit 0 run_ mpich.toml --np 3 --dry-run ./ring_mpich
  sed -e 's/^ *//' -e 's/ \\$//' "$t/out" | tr '\n' ' ' >"$t/words"
  expect_contains "$t/words" "mpiexec.hydra -f '<hostfile>' -n 3 -prepend-rank -launcher rsh -launcher-exec '<rsh>' -bind-to none -genvlist "
  expect_exit 0 run_ mpich.toml --np 3 ./ring_mpich
  for r in 0 1 2; do expect_contains "$t/out" "[$r] process $r of 3 on"; done
  expect_contains "$t/out" "[2] process 2 passed 4 messages"
  # -v shows the whole command line, the rank script too.
  expect_exit 0 run_ mpich.toml --np 2 -v ./ring_mpich
  expect_contains "$t/err" "case \${PMI_RANK:-} in"
fi
