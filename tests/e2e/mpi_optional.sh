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
if [[ $(id -u) != 0 ]]; then
  echo "SKIP (part of this test): hiding libmpi needs root; checked: no MPI/CUDA library needed at load time" >&2
  exit 0
fi
have unshare util-linux || exit 0
have mpirun openmpi-bin || exit 0
libmpi=$(readlink -f "$(ldconfig -p | awk '/libmpi\.so\.40 / { print $NF; exit }')")
[[ -f $libmpi ]] || fail "libmpi.so.40 is not in ldconfig's cache though mpirun is installed"

# mpirun (orterun) does not link libmpi, so it starts; the workers cannot load it.
hide="mount --bind /dev/null '$libmpi' && exec \"\$@\""
expect_exit 3 timeout -k 5 120 unshare -m sh -c "$hide" sh \
  "$DDL" bench allreduce --backend mpirun --np 2 --transport mpi -b 8 -e 8
expect_contains "$t/err" "the mpi transport is not available: Open MPI's library is not installed on this host"
# The same host, without the mpi transport: ddl runs.
expect_exit 0 timeout -k 5 60 unshare -m sh -c "$hide" sh "$DDL" run --np 1 -- true
echo "ok"
