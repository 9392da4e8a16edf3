#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerates the outputs of README.md's tour from real runs: every
# ```console block right after a "<!-- tour -->" line has its "$ COMMAND"
# lines (a trailing "\" continues one) run in order by one bash, in a scratch
# folder where build/ and examples/ are this checkout's, and the lines after
# each command replaced by what it printed (stdout and stderr). This
# machine's host name is written as "vm", the tour's machine.
#   scripts/readme-tour.sh [--check] [DDL_BINARY]
# --check rewrites nothing and exits 1 when a block differs (ranks' lines may
# come in another order).
set -euo pipefail
check=0
[[ ${1:-} == --check ]] && { check=1; shift; }
root=$(cd "$(dirname "$0")/.." && pwd)
ddl=$(realpath "${1:-$root/build/ddl}")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ddl-tour.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/build"
ln -s "$ddl" "$scratch/build/ddl"
ln -s "$root/examples" "$scratch/examples"
python3 - "$root/README.md" "$scratch" "$check" "$(hostname)" <<'PY'
import re, subprocess, sys
readme, scratch, check, host = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
lines = open(readme).read().split("\n")
MARK = "@@ddl-tour-next-command@@"

def commands(block):
    """The commands of a block: each "$ " line and its "\\" continuations."""
    out, i = [], 0
    while i < len(block):
        if block[i].startswith("$ "):
            cmd = [block[i]]
            while cmd[-1].endswith("\\") and i + 1 < len(block):
                i += 1
                cmd.append(block[i])
            out.append(cmd)
        i += 1
    return out

def run(cmds):
    script = "".join(f"echo {MARK}\n" + "\n".join(c)[2:] + "\n" for c in cmds)
    done = subprocess.run(["bash", "-c", script], cwd=scratch, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    parts = done.stdout.split(MARK + "\n")[1:]
    if len(parts) != len(cmds):
        sys.exit(f"readme-tour: expected {len(cmds)} outputs, got {len(parts)}:\n{done.stdout}")
    out = []
    for cmd, printed in zip(cmds, parts):
        printed = re.sub(rf"\b{re.escape(host)}\b", "vm", printed) if host != "vm" else printed
        out += cmd + printed.rstrip("\n").split("\n") if printed.strip() else cmd
    return out

result, stale, i = [], [], 0
while i < len(lines):
    result.append(lines[i])
    if lines[i].strip() == "<!-- tour -->" and i + 1 < len(lines) and lines[i + 1] == "```console":
        end = lines.index("```", i + 2)
        block = lines[i + 2:end]
        fresh = run(commands(block))
        if sorted(fresh) != sorted(block):
            stale.append("\n".join(commands(block)[0]))
        result += ["```console"] + fresh + ["```"]
        i = end + 1
        continue
    i += 1
if check:
    if stale:
        sys.exit("README.md tour blocks out of date (run scripts/readme-tour.sh): " + "; ".join(stale))
else:
    open(readme, "w").write("\n".join(result))
PY
