#!/usr/bin/env bash
# One ddl binary runs on hosts without MPI, CUDA or NCCL: none of their
# libraries is a load-time dependency, and where libmpi is missing the mpi
# transport says so (exit 3) while ddl itself still works.
source "$(dirname "$0")/common.inc"
command -v readelf >/dev/null || skip "readelf not installed"

needed=$(readelf -d "$DDL" | awk '/NEEDED/ { print $NF }')
for lib in libmpi libopen-rte libopen-pal libcudart libnccl libcuda; do
  if grep -q "\[$lib[.-]" <<<"$needed"; then
    fail "ddl needs $lib at load time: $(tr '\n' ' ' <<<"$needed")"
  fi
done

# The rest needs root (a private mount namespace hides libmpi) and Open MPI.
[[ $(id -u) == 0 ]] && command -v unshare >/dev/null || { echo "ok: no MPI/CUDA library needed"; exit 0; }
command -v mpirun >/dev/null || { echo "ok: no MPI/CUDA library needed"; exit 0; }
libmpi=$(readlink -f "$(ldconfig -p | awk '/libmpi\.so\.40 / { print $NF; exit }')")
[[ -f $libmpi ]] || { echo "ok: no MPI/CUDA library needed (libmpi.so.40 not found)"; exit 0; }

# mpirun (orterun) does not link libmpi, so it starts; the workers cannot load it.
hide="mount --bind /dev/null '$libmpi' && exec \"\$@\""
expect_exit 3 timeout -k 5 120 unshare -m sh -c "$hide" sh \
  "$DDL" bench allreduce --backend mpirun --np 2 --transport mpi -b 8 -e 8
expect_contains "$t/err" "the mpi transport is not available: Open MPI's library is not installed on this host"
# The same host, without the mpi transport: ddl runs.
expect_exit 0 timeout -k 5 60 unshare -m sh -c "$hide" sh "$DDL" run --np 1 -- true
echo "ok"
