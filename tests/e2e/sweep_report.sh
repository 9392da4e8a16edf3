#!/usr/bin/env bash
# ddl sweep writes SWEEP_DIR/report.html at the end of every sweep and of
# --resume: the trials table and a parallel-coordinates chart (numeric and
# categorical axes, the best trial marked, a failed trial drawn as failed),
# every user value escaped, nothing fetched. `--report` prints its path.
# A real headless browser (chromium) loads it with no console message, and
# its screenshot shows the chart: kept in $DDL_BUILD_DIR/test-output/sweep_report.
source "$(dirname "$0")/common.inc"
job=$t/job.toml
cat >"$job" <<'TOML'
[job]
name = "report<demo>"
command = 'if [ "$DDL_TRIAL" = 5 ]; then echo boom >&2; exit 3; fi; echo "loss: $((DDL_TRIAL * 3 % 5 + 1)).5"'
[sweep]
retries = 0
metric = { name = "loss", goal = "min" }
[sweep.parameters]
lr = [0.001, 0.01, 0.1]
opt = ["sgd", "<i>x</i>&\"'"]
TOML
# Trials 0..5: loss 1.5 4.5 2.5 5.5 3.5, trial 5 fails (exit 3).
expect_exit 1 "$DDL" sweep "$job" -H localhost:2 --np 1 --dir "$t/s" --report
report=$t/s/report.html
[[ $(tail -n 1 "$t/out") == "$report" ]] || { cat "$t/out"; fail "--report did not print $report last"; }
[[ -s $report ]] || fail "no $report"

# The user's values escaped; nothing fetched, no script.
expect_contains "$report" "&lt;i&gt;x&lt;/i&gt;&amp;&quot;&#39;"
expect_contains "$report" "<title>ddl sweep: report&lt;demo&gt;</title>"
expect_not_contains "$report" "<i>x"
expect_not_contains "$report" "<script"
if grep -oE '(src|href)="[^"]*"' "$report" | grep -v '"data:'; then fail "the report refers to another file"; fi
# The best trial (0, loss 1.5) marked in the table and the chart; trial 5 failed.
expect_contains "$report" '<tr class="best"><td>0 &#9733; best</td>'
expect_contains "$report" '<tr class="failed"><td>5</td>'
expect_contains "$report" 'failed (exit 3)'
expect_contains "$report" '<polyline class="trial best"'
expect_contains "$report" '<polyline class="trial failed"'
expect_contains "$report" 'best: trial 0'
expect_contains "$report" '>lr (log)</text>'      # a numeric axis over two decades
expect_contains "$report" '>sgd</text>'           # a categorical axis
expect_contains "$report" '>loss (min)</text>'    # the metric's axis

# --resume writes it again (nothing left to run); --json names it.
rm "$report"
expect_exit 1 "$DDL" sweep --resume "$t/s" --report
[[ $(tail -n 1 "$t/out") == "$report" && -s $report ]] || fail "--resume wrote no report"
expect_exit 1 "$DDL" sweep --resume "$t/s" --json
python3 - "$t/out" "$report" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["report"] == sys.argv[2], doc
PY

# A real browser: no console message (CSP violations and script errors are
# logged as CONSOLE lines; a page that breaks the CSP proves they are seen).
have chromium chromium || exit 0
browse() {  # browse PAGE ARGS...: chromium's stderr in $t/browser.err
  local page=$1; shift
  timeout 120 chromium --headless --disable-gpu --no-sandbox --user-data-dir="$t/chromium" \
    --enable-logging=stderr --log-level=0 "$@" "file://$page" 2>"$t/browser.err"
}
sed 's#</body>#<img src="http://198.18.0.1/x.png"></body>#' "$report" >"$t/bad.html"
browse "$t/bad.html" --dump-dom >/dev/null
expect_contains "$t/browser.err" ":CONSOLE"
browse "$report" --dump-dom >"$t/dom.html"
expect_not_contains "$t/browser.err" ":CONSOLE"
[[ $(grep -o '<polyline' "$t/dom.html" | wc -l) == 6 ]] || fail "the browser's page has not 6 trial lines"
out_dir=${DDL_BUILD_DIR:-$t}/test-output/sweep_report
mkdir -p "$out_dir"
cp "$report" "$out_dir/report.html"
browse "$report" --window-size=1000,900 --screenshot="$out_dir/report.png"
expect_not_contains "$t/browser.err" ":CONSOLE"
# The screenshot shows the chart: the best trial's orange and the failed red.
python3 - "$out_dir/report.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    size, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + size]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + size
assert depth == 8 and colour in (2, 6), (depth, colour)
bpp = 3 if colour == 2 else 4
raw, stride = zlib.decompress(idat), width * bpp
rows, prev, i = [], bytearray(stride), 0
for _ in range(height):
    kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if kind == 1: line[x] = (line[x] + a) & 255
        elif kind == 2: line[x] = (line[x] + b) & 255
        elif kind == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
def count(rgb):
    return sum(1 for row in rows for x in range(0, stride, bpp) if tuple(row[x:x + 3]) == rgb)
best, failed = count((0xe6, 0x55, 0x0d)), count((0xd6, 0x27, 0x28))
assert best > 300, f"the best trial's line is not in the screenshot ({best} pixels)"
assert failed > 30, f"the failed trial is not in the screenshot ({failed} pixels)"
PY
echo "screenshot: $out_dir/report.png"
