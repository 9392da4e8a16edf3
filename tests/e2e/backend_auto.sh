#!/usr/bin/env bash
# backend = auto (the default): local when every host is this machine, ssh
# as soon as one is not (so a remote host list never runs on the launcher),
# mpirun for the mpi framework; render and --dry-run say which and why.
# An explicit local with a remote host, or local/ssh with mpi: exit 2.
source "$(dirname "$0")/common.inc"
remote=192.0.2.1  # TEST-NET-1: never an address of this machine

plan_backend() { expect_exit 0 timeout 20 "$DDL" render --format plan "$@"; head -n 1 "$t/out"; }

# This machine under all its names: localhost, 127.0.0.0/8, ::1, its host
# name, an address of one of its interfaces.
for spec in localhost:2 127.0.0.1:1,127.0.1.1:1 '[::1]:2' "$(hostname):2"; do
  plan_backend -H "$spec" >"$t/line"
  expect_contains "$t/line" "backend local (auto: every host is this machine)"
done
own_address=$(ip -o -4 addr show scope global 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')
if [[ -n $own_address ]]; then
  plan_backend -H "$own_address:2" >"$t/line"
  expect_contains "$t/line" "backend local (auto:"
fi
# No host source at all: this machine.
plan_backend --np 2 >"$t/line"
expect_contains "$t/line" "backend local (auto: every host is this machine)"

# One remote host is enough for ssh; the host is named.
plan_backend -H "localhost:1,$remote:2" >"$t/line"
expect_contains "$t/line" "backend ssh (auto: host '$remote' is not this machine)"
expect_exit 0 timeout 20 "$DDL" run --dry-run -H "nosuch-host.invalid:2" -- true
expect_contains "$t/out" "backend ssh (auto: host 'nosuch-host.invalid' is not this machine)"
# A backend named is shown as is.
plan_backend -H localhost:2 --backend local >"$t/line"
expect_contains "$t/line" "backend local, frameworks"

# Explicit local with a remote host: exit 2 naming it, on the command line
# and in the job file; nothing runs.
expect_exit 2 timeout 20 "$DDL" run --backend local -H "localhost:1,$remote:2" -- touch "$t/ran"
expect_contains "$t/err" "backend local runs every rank on this machine, but host '$remote' is not this machine"
[[ ! -e $t/ran ]] || fail "a rank ran"
printf '[launch]\nbackend = "local"\n[hosts]\nlist = ["%s:2"]\n' "$remote" >"$t/local.toml"
expect_exit 2 timeout 20 "$DDL" render "$t/local.toml" --format plan
expect_contains "$t/err" "host '$remote' is not this machine"

# The issue's report: hosts that do not exist are not "reachable" (auto
# takes ssh, which cannot resolve them), one row each, exit 3.
expect_exit 3 timeout 60 "$DDL" hosts -H 'nosuch[1-2].invalid:8' --check --json
python3 - "$t/out" <<'PY'
import json, sys
hosts = json.load(open(sys.argv[1]))["hosts"]
assert [h["name"] for h in hosts] == ["nosuch1.invalid", "nosuch2.invalid"], hosts
for h in hosts:
    assert h["reachable"] is False and h["error"], h
PY
expect_exit 0 timeout 20 "$DDL" hosts -H localhost:2 --check
expect_contains "$t/out" "yes"

# The mpi framework: auto takes mpirun; local, ssh or kubernetes would make
# every rank an MPI singleton, so they are refused (exit 2).
printf '[job]\nframeworks = ["mpi"]\n' >"$t/mpi.toml"
plan_backend "$t/mpi.toml" -H localhost:2 >"$t/line"
expect_contains "$t/line" "backend mpirun (auto: the mpi framework needs mpirun"
for backend in local ssh kubernetes; do
  expect_exit 2 timeout 20 "$DDL" run "$t/mpi.toml" -H localhost:2 --backend "$backend" -- touch "$t/ran"
  expect_contains "$t/err" "backend $backend cannot run the mpi framework: every rank would be an MPI singleton"
  expect_contains "$t/err" "use backend mpirun"
done
[[ ! -e $t/ran ]] || fail "a rank ran"
