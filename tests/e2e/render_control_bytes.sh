#!/usr/bin/env bash
# Values with newlines, quotes, dollars and control bytes: every line of
# `render --format env` is one assignment that eval (or `.`) gives back
# byte for byte, so a value can never forge a line of its own (an
# LD_PRELOAD=...); --dry-run and tables print control bytes escaped, never
# raw (an ESC byte would drive the terminal). (issue 27, item 11)
source "$(dirname "$0")/common.inc"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps.sh installs it)"

cat >"$t/job.toml" <<'TOML'
[job]
command = ["true"]
[job.env]
FORGED = "a\nLD_PRELOAD=/tmp/evil.so"
QUOTES = "it's \"$HOME\" `id` \\ $(id)"
ESCAPE = "\u001b[31mred\u001b[0m"
TABS = "a\tb\rc"
TRAILING = "x\n\n"
EMPTY = ""
BYTES = "\u0001\u007f\u00e9"
PLAIN = "/usr/lib:/opt/lib"
TOML
want=$(python3 -c '
print(repr({"FORGED": "a\nLD_PRELOAD=/tmp/evil.so", "QUOTES": "it'"'"'s \"$HOME\" `id` \\ $(id)",
  "ESCAPE": "\x1b[31mred\x1b[0m", "TABS": "a\tb\rc", "TRAILING": "x\n\n", "EMPTY": "", "BYTES": "\x01\x7f\u00e9",
  "PLAIN": "/usr/lib:/opt/lib"}))')

expect_exit 0 "$DDL" render "$t/job.toml" -H localhost:1 --format env --rank 0
cp "$t/out" "$t/env"
grep -q '^LD_PRELOAD=' "$t/env" && fail "a value forged a line of its own: $(cat "$t/env")"
grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$t/env" && fail "a raw control byte in render --format env"
expect_contains "$t/env" "PLAIN=/usr/lib:/opt/lib"

# Each line alone, eval'd by bash, sets exactly one variable: its own name.
while IFS= read -r line; do
  name=${line%%=*}
  set_now=$(env -i bash -c "before=\$(compgen -v); eval \"\$1\" || exit 9; comm -13 <(echo \"\$before\" | sort) <(compgen -v | sort) | grep -vxE 'before|PIPESTATUS|_'" _ "$line") ||
    fail "eval failed: $line"
  [[ $set_now == "$name" ]] || fail "'$line' set '$set_now', want only $name"
done <"$t/env"

# Sourced whole (bash, and zsh where installed), every value comes back byte for byte.
for shell in bash zsh; do
  command -v $shell >/dev/null || { echo "SKIP (visible): $shell is not installed" >&2; continue; }
  get='${!n}'
  [[ $shell == zsh ]] && get='${(P)n}'
  env -i $shell -c ". '$t/env'; for n in FORGED QUOTES ESCAPE TABS TRAILING EMPTY BYTES PLAIN; do printf '%s\0%s\0' \"\$n\" \"$get\"; done" >"$t/got.$shell"
  python3 - "$t/got.$shell" "$want" "$shell" <<'PY'
import ast, sys
parts = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
got = {parts[i].decode(): parts[i + 1].decode() for i in range(0, len(parts), 2)}
want = ast.literal_eval(sys.argv[2])
bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
assert not bad, f"{sys.argv[3]}: {bad}"
PY
done

# --dry-run and the plan table: control bytes escaped, one line per value.
expect_exit 0 "$DDL" run "$t/job.toml" -H localhost:1 --dry-run
grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$t/out" && fail "--dry-run wrote a raw control byte"
grep -q '^ *LD_PRELOAD=' "$t/out" && fail "--dry-run shows a forged line"
expect_contains "$t/out" "ESCAPE=\$'\\e[31mred\\e[0m'"
expect_contains "$t/out" "FORGED=\$'a\\nLD_PRELOAD=/tmp/evil.so'"
expect_exit 0 "$DDL" render "$t/job.toml" -H localhost:1 --format plan
grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$t/out" && fail "render --format plan wrote a raw control byte"

# A command word with an ESC byte, shown by --dry-run.
expect_exit 0 "$DDL" run -H localhost:1 --dry-run -- printf $'\e[2J'
grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$t/out" && fail "--dry-run wrote the command's raw ESC"
expect_contains "$t/out" "command: printf \$'\\e[2J'"
echo ok
