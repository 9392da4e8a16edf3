#!/usr/bin/env bash
# man/ddl.1 renders with no groff warning and holds every section users look for.
source "$(dirname "$0")/common.inc"
command -v groff >/dev/null || skip "groff is not installed"
page="$DDL_SOURCE_DIR/man/ddl.1"

expect_exit 0 groff -man -ww -z "$page"
[[ ! -s "$t/err" ]] || { cat "$t/err"; fail "groff warned about man/ddl.1"; }

expect_exit 0 groff -man -Tascii -P-cbou "$page"
for section in NAME SYNOPSIS DESCRIPTION "COMMON OPTIONS" COMMANDS "JOB FILE" ENVIRONMENT \
    "EXIT STATUS" "JSON OUTPUT" "SSH HOST KEYS" "GANG SEMANTICS" RENDEZVOUS EXAMPLES; do
  grep -qx "$section" "$t/out" || fail "man page lacks section '$section'"
done
for table in job hosts launch ssh kubernetes rendezvous torch tensorflow; do
  grep -qx "   \[$table\]" "$t/out" || fail "man page lacks the job-file table [$table]"
done

# Every job-file key of the schema (the table of section readers in
# src/job/job_sections.cpp: {"section", {"key", ...}, reader}) appears in the
# man page as "[section] key" table row or "section.key".
plain=$(sed 's/\\-/-/g; s/\\f[BIRP]//g; s/\\(dq/"/g' "$page")
python3 - "$DDL_SOURCE_DIR/src/job/job_sections.cpp" >"$t/keys" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
body = src[src.index("section_readers()"):]
body = body[:body.index("return readers;")]
for section, keys in re.findall(r'\{"(\w+)",\s*\{([^}]*)\}', body):
    for key in re.findall(r'"(\w+)"', keys):
        print(section, key)
PY
[[ $(wc -l <"$t/keys") -gt 30 ]] || fail "found only $(wc -l <"$t/keys") job-file keys in job_sections.cpp"
missing=()
while read -r section key; do
  # The [section] table lists its keys as "   key" rows (see the table check above).
  table=$(awk -v s="$section" '/^\.SS / { on = ($0 ~ "\\[" s "\\]") } on' <<<"$plain")
  grep -qE "(^|[^A-Za-z0-9_])$key([^A-Za-z0-9_]|$)" <<<"$table" || missing+=("[$section] $key")
done <"$t/keys"
((${#missing[@]} == 0)) || fail "man page lacks job-file keys: ${missing[*]}"

# Every environment variable the code names (a quoted NAME_WITH_UNDERSCORE, or
# read with getenv) appears in the man page. Column titles are not variables.
not_variables="TF_TASK"
names=$( (grep -rhoE '"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+"' "$DDL_SOURCE_DIR"/{src,cmd,backends,rendezvous} \
  --include='*.cpp' --include='*.hpp'; grep -rhoE 'getenv\("[A-Za-z_0-9]+"\)' "$DDL_SOURCE_DIR"/{src,cmd,backends,rendezvous}) |
  grep -oE '[A-Z][A-Z0-9_]+' | grep -v '^getenv$' | sort -u)
[[ $(wc -l <<<"$names") -gt 40 ]] || fail "found only $(wc -l <<<"$names") variable names in the code"
missing=()
for name in $names; do
  [[ " $not_variables " == *" $name "* ]] && continue
  grep -qE "(^|[^A-Za-z0-9_])$name([^A-Za-z0-9_]|$)" <<<"$plain" || missing+=("$name")
done
((${#missing[@]} == 0)) || fail "man page lacks environment variables named in the code: ${missing[*]}"
