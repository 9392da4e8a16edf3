#!/usr/bin/env bash
# torch.master_port = 0: ddl picks a free port and every rank gets the same one.
source "$(dirname "$0")/common.inc"

cat >"$t/job.toml" <<'TOML'
[job]
command = "echo port=$MASTER_PORT jax=$JAX_COORDINATOR_ADDRESS"
frameworks = ["torch", "jax"]
[launch]
np = 3
[torch]
master_port = 0
TOML
expect_exit 0 timeout -k 5 30 "$DDL" run "$t/job.toml"
ports=$(grep -o 'port=[0-9]*' "$t/out" | sort -u)
[[ $(wc -l <<<"$ports") == 1 ]] || fail "ranks disagree on MASTER_PORT: $ports"
port=${ports#port=}
((port > 0 && port < 65535)) || fail "bad port $port"
expect_contains "$t/out" "jax=127.0.0.1:$((port + 1))"
expect_not_contains "$t/out" "<free-port>"

# --dry-run launches nothing and so binds nothing: it shows a placeholder.
expect_exit 0 "$DDL" run "$t/job.toml" --dry-run
expect_contains "$t/out" "<free-port>"

# The default is the same: no master_port in the job file picks a free one.
expect_exit 0 timeout -k 5 30 "$DDL" run --np 2 -- sh -c 'echo port=$MASTER_PORT'
ports=$(grep -o 'port=[0-9]*' "$t/out" | sort -u)
[[ $(wc -l <<<"$ports") == 1 && $ports != port=29500 ]] || fail "default MASTER_PORT: $ports"

# An explicit port is kept when free, and refused (exit 3, before any rank
# starts) when something listens on it; JAX's coordinator port (+1) too.
# held - 1 must be free too (it is the job's own port below): found so.
held=$(python3 -c '
import socket
def free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); return True
    except OSError:
        return False
    finally:
        s.close()
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    if port > 1024 and free(port - 1):
        print(port); break')
printf '[job]\ncommand = "echo port=$MASTER_PORT"\n[torch]\nmaster_port = %s\n' "$held" >"$t/fixed.toml"
expect_exit 0 timeout -k 5 30 "$DDL" run "$t/fixed.toml" --np 2
expect_contains "$t/out" "port=$held"
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
print("listening", flush=True); time.sleep(30)' "$held" >"$t/listener.out" &
listener=$!
for _ in $(seq 50); do grep -q listening "$t/listener.out" && break; sleep 0.1; done
expect_exit 3 timeout -k 5 30 "$DDL" run "$t/fixed.toml" --np 2
expect_contains "$t/err" "ddl: error: torch.master_port: port $held is already in use on this machine"
expect_not_contains "$t/out" "port="
printf '[job]\ncommand = "true"\nframeworks = ["jax"]\n[torch]\nmaster_port = %s\n' "$((held - 1))" >"$t/jax.toml"
expect_exit 3 timeout -k 5 30 "$DDL" run "$t/jax.toml" --np 1
expect_contains "$t/err" "port $held is already in use"
kill "$listener"; wait "$listener" 2>/dev/null || true

# A derived port out of range: JAX's coordinator needs master_port + 1.
printf '[job]\nframeworks = ["torch", "jax"]\n[torch]\nmaster_port = 65535\n' >"$t/range.toml"
expect_exit 2 "$DDL" render "$t/range.toml" --format plan
expect_contains "$t/err" "range.toml:4:15: torch.master_port: 65535 leaves no port for JAX's coordinator"
