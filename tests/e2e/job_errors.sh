#!/usr/bin/env bash
# The real binary reports every job-file and option problem at once, as
# FILE:LINE:COL: message (options as OPTION: message), and exits 2.
source "$(dirname "$0")/common.inc"

expect_exit 2 "$DDL" render "$t/none.toml" --format plan
expect_contains "$t/err" "$t/none.toml: cannot read job file: No such file or directory"

expect_exit 2 "$DDL" render "$t" --format plan
expect_contains "$t/err" "$t: is a directory, not a job file"

head -c 1048577 /dev/zero | tr '\0' '#' >"$t/big.toml"
expect_exit 2 "$DDL" render "$t/big.toml" --format plan
expect_contains "$t/err" "$t/big.toml: job file is larger than 1048576 bytes"

cat >"$t/job.toml" <<'TOML'
[job]
comand = ["python3", "train.py"]
timeout = "5x"
env = { "BAD-NAME" = "1" }

[hosts]
list = ["node[01-02]:2", "-oProxyCommand=evil", "a;b"]
hostfile = "hosts.txt"

[launch]
np = 0
backend = "shh"

[tensorflow]
chief = 2
TOML
expect_exit 2 "$DDL" render "$t/job.toml" --format plan
for line in \
  "$t/job.toml:2:1: unknown key 'comand' in [job]; did you mean 'command'?" \
  "$t/job.toml:3:11: job.timeout: invalid duration '5x'; use a number and a unit: 500ms, 30s, 5m, 2h, 1h30m" \
  "$t/job.toml:4:9: job.env: 'BAD-NAME' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)" \
  "$t/job.toml:7:26: hosts.list: bad host name '-oProxyCommand=evil': starts with '-'" \
  "$t/job.toml:7:49: hosts.list: bad host name 'a;b': contains the shell metacharacter ';'" \
  "$t/job.toml:8:12: hosts.hostfile: conflicts with hosts.list; give only one of list, hostfile, slurm, discovery_script" \
  "$t/job.toml:8:12: hosts.hostfile: cannot read '$t/hosts.txt': No such file or directory" \
  "$t/job.toml:11:6: launch.np: must be between 1 and 1000000" \
  "$t/job.toml:12:11: launch.backend: 'shh' is not one of auto, local, ssh, kubernetes, mpirun, slurm; did you mean 'ssh'?" \
  "$t/job.toml:15:9: tensorflow.chief: must be 0 or 1"; do
  expect_contains "$t/err" "$line"
done
[[ $(grep -c "job.toml:" "$t/err") == 10 ]] || { cat "$t/err"; fail "expected exactly 10 problems"; }

printf '[job\n' >"$t/broken.toml"
expect_exit 2 "$DDL" render "$t/broken.toml" --format plan
expect_contains "$t/err" "$t/broken.toml:1:5: "

# Options alone, no job file: their problems name the option.
expect_exit 2 "$DDL" render --format plan -H 'node[3-1]' --np 0
expect_contains "$t/err" "--hosts: reversed range '3-1' in 'node[3-1]'"
expect_contains "$t/err" "--np: must be at least 1"
