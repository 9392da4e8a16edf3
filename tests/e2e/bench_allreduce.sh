#!/usr/bin/env bash
# ddl bench allreduce on the local backend: the nccl-tests table (parsed), the
# JSON (-J and --json), exit 2 for bad flags, exit 3 for transports that cannot
# run here (nccl without a GPU, mpi outside mpirun), N/A with -c 0.
source "$(dirname "$0")/common.inc"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
bench() { timeout -k 5 120 "$DDL" bench allreduce "$@"; }

expect_exit 0 bench --np 4 -b 8 -e 1M -n 5 -w 1 -J "$t/out.json"
cp "$t/out" "$t/table"
# The table, checked like a log parser would: header lines, 13 columns per
# row, sizes doubling from 8 to 1M, no wrong element, the footer. The sweep
# crosses recursive doubling and halving-doubling, as the facts line says.
"$py" - "$t/table" <<'PY' || fail "the table does not parse as all_reduce_perf's"
import sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "no final newline"
lines = lines[:-1]
need = [
    "# tcp: ring over TCP, 1 stream(s) per neighbour, 1024 KiB segments; recursive doubling up to 64 KiB; halving-doubling up to 1024 KiB",
    "# Collective test starting: all_reduce_perf",
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 1 iters: 5 agg iters: 1 validation: 1 graph: 0",
    "#                                                              out-of-place                       in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
    "# Out of bounds values : 0 OK",
    "#",
    "# Collective test concluded: all_reduce_perf",
]
for line in need:
    assert line in lines, "missing line: %r" % line
assert lines[0].startswith("# ddl ") and "transport tcp, 4 ranks on 1 host" in lines[0], lines[0]
assert sum(l.startswith("#  Rank ") for l in lines) == 4
rows = [l for l in lines if not l.startswith("#")]
sizes = []
for row in rows:
    f = row.split()
    assert len(f) == 13, row
    assert len(row) == 12 + 2 + 12 + 2 + 8 + 2 + 6 + 2 + 6 + 2 * (2 + 7 + 2 + 6 + 2 + 6 + 2 + 6), row
    assert f[2] == "float" and f[3] == "sum" and f[4] == "-1", row
    assert f[8] == "0" and f[12] == "0", "wrong elements: " + row
    assert int(f[1]) * 4 == int(f[0])
    for v in (f[5], f[6], f[7], f[9], f[10], f[11]):
        float(v)
    sizes.append(int(f[0]))
assert sizes == [8 << i for i in range(18)], sizes
avg = [l for l in lines if l.startswith("# Avg bus bandwidth    : ")]
assert len(avg) == 1 and avg[0].endswith(" "), avg
float(avg[0].split(":")[1])
PY

# -J: the JSON shape of DESIGN.md; the same document as --json on stdout.
"$py" - "$t/out.json" <<'PY' || fail "bad -J JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
assert set(doc) == {"transport", "world_size", "results", "avg_busbw"}, doc.keys()
assert doc["transport"] == "tcp" and doc["world_size"] == 4
assert len(doc["results"]) == 18
for r in doc["results"]:
    assert set(r) == {"size", "count", "type", "redop", "out_of_place", "in_place"}
    for p in ("out_of_place", "in_place"):
        assert set(r[p]) == {"time_us", "algbw", "busbw", "wrong"} and r[p]["wrong"] == 0
        assert abs(r[p]["busbw"] - r[p]["algbw"] * 1.5) <= 1e-9 * max(1, r[p]["busbw"])
PY
expect_exit 0 bench --np 2 -b 1K -e 4K -n 2 -w 0 -d half -o max --json
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [r["size"] for r in d["results"]]==[1024,2048,4096] and d["results"][0]["type"]=="half" and d["results"][0]["redop"]=="max"' "$t/out" ||
  fail "--json output: $(cat "$t/out")"

# -c 0: no verification, N/A in both #wrong columns.
expect_exit 0 bench --np 2 -b 64 -e 64 -n 2 -w 0 -c 0
grep -E '^ +64 ' "$t/out" | grep -qE 'N/A +[^ ]+ +[^ ]+ +[^ ]+ +N/A$' || fail "no N/A with -c 0: $(cat "$t/out")"

# Usage errors: exit 2, every problem at once, nothing launched.
expect_exit 2 bench --np 2 -b 8X -d float8 -o avg
expect_contains "$t/err" "ddl: error: --minbytes: '8X' is not a size"
expect_contains "$t/err" "--datatype: unknown type 'float8'"
expect_contains "$t/err" "--op: unknown op 'avg'"
expect_exit 2 bench --np 2 -b 1M -e 1K
expect_contains "$t/err" "--minbytes is larger than --maxbytes"
expect_exit 2 bench --np 2 --transport mpi -d half
expect_contains "$t/err" "--transport mpi has no half or bfloat16"

# nccl without a GPU (or without libcudart/libnccl, or a build without NCCL):
# exit 3 and one clear message.
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "a GPU is here: skipping the no-GPU nccl check" >&2
else
  expect_exit 3 bench --np 2 -b 8 -e 8 --transport nccl
  expect_contains "$t/err" "ddl: error: the nccl transport is not available: "
  expect_contains "$t/err" "; use --transport tcp"
  expect_contains "$t/err" "exited with code 3"
fi

# mpi outside mpirun: exit 3.
expect_exit 3 bench --np 2 -b 8 -e 8 --transport mpi
expect_contains "$t/err" "the mpi transport needs workers started by mpirun"
