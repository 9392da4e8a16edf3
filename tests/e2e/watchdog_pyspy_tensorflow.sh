#!/usr/bin/env bash
# The watchdog's dump = "auto" (issue 39): with the project's py-spy first on
# PATH, a stall in a real TensorFlow job yields each rank's Python stack by
# py-spy.
source "$(dirname "$0")/common.inc"
python=$(framework_python tensorflow)
venv_bin=$(dirname "$python")
[[ -x $venv_bin/py-spy ]] || { [[ ${CI:-} == true ]] && fail "no py-spy in $venv_bin"; skip "no py-spy in $venv_bin"; }
cat >"$t/job.toml" <<TOML
[job]
command = ["$python", "$DDL_SOURCE_DIR/tests/fixtures/clients/tf_stall.py"]
grace = "1s"
[watchdog]
stall = "5s"
dump = "auto"
dump_timeout = "30s"
TOML
PATH=$venv_bin:$PATH expect_exit 5 timeout -k 5 180 "$DDL" run "$t/job.toml" --np 2
expect_contains "$t/out" "[1] step 1: 4.0"
for r in 0 1; do
  grep -qE "\[$r\] ddl: stacks of pid [0-9]+ on .* by py-spy:" "$t/err" || { cat "$t/err"; fail "no py-spy dump of rank $r"; }
done
expect_contains "$t/err" "waiting_for_a_peer_forever"
echo "ok: a stalled TensorFlow job's ranks dumped by py-spy"
