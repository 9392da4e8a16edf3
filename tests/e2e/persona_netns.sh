#!/usr/bin/env bash
# The personalities on the namespace hosts (issue 29): one `ddl torchrun`
# starts real PyTorch (gloo) on both hosts, `ddl mpirun` one MPI world across
# them (a C program built with mpicc, and mpi4py), `ddl deepspeed` its
# hostfile's hosts, `ddl horovodrun` Horovod's Gloo rendezvous (its PROTOCOL
# CLIENT, not Horovod); -F names the ssh config as ssh -F does. Needs root.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch with gloo is not importable"
netns_up 2
a=("${NETNS_ADDRS[@]}")
job=$NETNS_DIR/ssh.toml
cd "$t"

# torchrun's multi-node line, once for both nodes; the ssh settings from -F.
DDL_TIMEOUT=100 expect_exit 0 ddl_ssh torchrun -F "$NETNS_DIR/ssh_config" -H "${a[0]},${a[1]}" --nnodes=2 \
  --nproc-per-node=2 --rdzv-backend=c10d --rdzv-endpoint="${a[0]}:29400" --python "$python" \
  "$DDL_SOURCE_DIR/tests/fixtures/clients/torch_allreduce.py"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] rank $r of 4: allreduce sum 10 (want 10) ok"; done
# An endpoint on another host than rank 0's: refused before anything starts.
expect_exit 2 ddl_ssh torchrun --job "$job" -H "${a[0]},${a[1]}" --nnodes=2 --rdzv-endpoint="${a[1]}:29400" t.py
expect_contains "$t/err" "ddl: error: --rdzv-endpoint ${a[1]}:29400: ddl puts rank 0 on the job's first host (${a[0]})"

# DeepSpeed's hostfile naming both hosts, --local_rank on each.
printf '%s slots=1\n%s slots=1\n' "${a[0]}" "${a[1]}" >"$t/myhostfile"
cat >"$t/ds.py" <<'PY'
import argparse, os, socket
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int)
args, rest = parser.parse_known_args()
print("rank %s on %s local_rank=%d cross=%s/%s args=%s" % (os.environ["RANK"], socket.gethostname(),
      args.local_rank, os.environ["CROSS_RANK"], os.environ["CROSS_SIZE"], rest))
PY
DDL_TIMEOUT=60 expect_exit 0 ddl_ssh deepspeed --job "$job" --hostfile="$t/myhostfile" --python "$python" \
  "$t/ds.py" --deepspeed
expect_contains "$t/out" "[0] rank 0 on h1 local_rank=0 cross=0/2 args=['--deepspeed']"
expect_contains "$t/out" "[1] rank 1 on h2 local_rank=0 cross=1/2 args=['--deepspeed']"

# horovodrun -H across the hosts: Horovod's Gloo rendezvous served by ddl.
client=$DDL_SOURCE_DIR/tests/fixtures/clients/horovod_http_client.py
DDL_TIMEOUT=60 expect_exit 0 ddl_ssh horovodrun --job "$job" -np 4 -H "${a[0]}:2,${a[1]}:2" python3 "$client"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] rank $r: global 4 ranks"; done

# mpirun: one world of 4 across both hosts.
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  mpicc -O1 -o "$t/ring_c" "$DDL_SOURCE_DIR/tests/fixtures/mpi/ring.c"
  DDL_TIMEOUT=90 expect_exit 0 ddl_ssh mpirun --job "$job" -np 4 -H "${a[0]}:2,${a[1]}:2" "$t/ring_c"
  expect_contains "$t/out" "[0] process 0 of 4 on h1"
  expect_contains "$t/out" "[3] process 3 of 4 on h2"
  if /usr/bin/python3 -c "import mpi4py" 2>/dev/null; then
    DDL_TIMEOUT=90 expect_exit 0 ddl_ssh mpirun --job "$job" -n 2 -H "${a[0]},${a[1]}" /usr/bin/python3 -m mpi4py.bench helloworld
    expect_contains "$t/out" "[0] Hello, World! I am process 0 of 2 on h1."
    expect_contains "$t/out" "[1] Hello, World! I am process 1 of 2 on h2."
  fi
fi
# Nothing left on either host (the mpirun rank script's watchdog may still
# be in its last `sleep 1`).
for ns in "${NETNS_HOSTS[@]}"; do
  for _ in $(seq 40); do
    left=$(ip netns pids "$ns" | xargs -r ps -o comm= -p | grep -v '^sshd$' || true)
    [[ -z $left ]] && break
    sleep 0.1
  done
  [[ -z $left ]] || fail "left on $ns: $left"
done
