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
