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

# Every exit code of ddl's own (the ExitCode enum, src/util/exit_codes.hpp) is
# a row of EXIT STATUS.
exit_status=$(awk '/^\.SH EXIT STATUS/ { on = 1; next } /^\.SH / { on = 0 } on' "$page")
codes=$(sed -n 's/^ *[a-z_]* = \([0-9]\+\),.*/\1/p' "$DDL_SOURCE_DIR/src/util/exit_codes.hpp")
[[ $(wc -w <<<"$codes") -ge 8 ]] || fail "found only $(wc -w <<<"$codes") exit codes in exit_codes.hpp"
for code in $codes; do
  grep -qx "\.B $code" <<<"$exit_status" || fail "EXIT STATUS lacks exit code $code"
done

# Every example marked runnable (a '.\" runnable: KIND' line before its .EX
# block) is checked, in a scratch folder that holds job.toml, sweep.toml,
# train.py and a hostfile hosts:
#   job          the block is a job file that `ddl render --format json` takes;
#   job-offline  the same with --backend local -H localhost:8 (a cluster's
#                backend, kubernetes or slurm, whose hosts this machine lacks);
#   dry-run      each `ddl SUB ...` line exits 0 with --dry-run (after SUB, where
#                the line has none);
#   run          each `ddl ...` line exits 0 as it is;
#   syntax       each option of each `ddl SUB ...` line is one SUB's --help names.
python3 - "$page" "$t/examples" <<'PY'
import os, re, sys
lines = open(sys.argv[1]).read().split("\n")
out = sys.argv[2]; os.makedirs(out)
def plain(s):
    for a, b in (("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\~", " "), ("\\&", ""), ("\\e", "\\")):
        s = s.replace(a, b)
    return re.sub(r"\\f[BIRP]", "", s)
n = 0
for i, line in enumerate(lines):
    m = re.match(r'\.\\" runnable: ([a-z-]+)$', line)
    if not m:
        continue
    start = next(k for k in range(i + 1, len(lines)) if lines[k].startswith(".EX"))
    end = next(k for k in range(start + 1, len(lines)) if lines[k].startswith(".EE"))
    n += 1
    with open(f"{out}/{n:03d}.{m.group(1)}", "w") as f:
        f.write(f"# man/ddl.1:{start + 2}\n" + "\n".join(plain(l) for l in lines[start + 1:end]) + "\n")
PY
scratch=$t/scratch
mkdir "$scratch"
printf '[job]\ncommand = ["python3", "train.py"]\n[launch]\nnp = 2\n' >"$scratch/job.toml"
printf '[job]\ncommand = ["python3", "train.py", "--lr", "{lr}"]\n[sweep]\nmetric = { name = "loss", goal = "min" }\nparameters = { lr = [0.1, 0.01] }\n' >"$scratch/sweep.toml"
printf 'print("step 1 loss=0.5")\n' >"$scratch/train.py"
printf 'node1 slots=2\nnode2 slots=2\n' >"$scratch/hosts"
# The words of each `ddl ...` line of an example, one per line, a blank line after each command.
ddl_lines() {
  python3 -c 'import shlex, sys
for line in open(sys.argv[1]):
    words = shlex.split(line, comments=True)
    if words[:1] == ["ddl"]:
        print("\n".join(words[1:]) + "\n")' "$1"
}
runnable=0
for example in "$t"/examples/*; do
  [[ -e $example ]] || break
  runnable=$((runnable + 1))
  kind=${example##*.} where=$(head -1 "$example")
  case $kind in
  job | job-offline)
    extra=()
    [[ $kind == job ]] || extra=(--backend local -H localhost:8)
    (cd "$scratch" && "$DDL" render "$example" --format json "${extra[@]}") >"$t/out" 2>"$t/err" ||
      { cat "$t/err"; fail "$where: the job-file example does not load"; } ;;
  dry-run | run | syntax)
    while IFS= read -r -d '' command; do
      mapfile -t words <<<"$command"
      sub=(${words[0]}) rest=("${words[@]:1}")
      [[ ${words[0]} == bench ]] && sub=(bench "${words[1]}") rest=("${words[@]:2}")
      case $kind in
      dry-run)
        dry=(--dry-run)
        [[ " ${rest[*]} " == *" --dry-run "* ]] && dry=()
        (cd "$scratch" && "$DDL" "${sub[@]}" "${dry[@]}" "${rest[@]}") >"$t/out" 2>"$t/err" ||
        { cat "$t/err"; fail "$where: 'ddl ${words[*]}' fails with --dry-run"; } ;;
      run) (cd "$scratch" && timeout 60 "$DDL" "${sub[@]}" "${rest[@]}") >"$t/out" 2>"$t/err" ||
        { cat "$t/err"; fail "$where: 'ddl ${words[*]}' fails"; } ;;
      syntax)
        help=$("$DDL" "${sub[@]}" --help) || fail "$where: 'ddl ${sub[*]}' is no command"
        for word in "${rest[@]}"; do
          [[ $word == -- ]] && break
          [[ $word == -* ]] || continue
          grep -qE -- "(^|[ ,])${word%%=*}([ ,=]|\$)" <<<"$help" || fail "$where: 'ddl ${sub[*]}' has no option ${word%%=*}"
        done ;;
      esac
    done < <(ddl_lines "$example" | awk 'BEGIN { RS = ""; ORS = "\0" } { print }') ;;
  *) fail "$where: unknown kind of runnable example '$kind'" ;;
  esac
done
((runnable >= 20)) || fail "only $runnable examples of the man page are marked runnable"
