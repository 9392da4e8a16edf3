#!/usr/bin/env bash
# ARCHITECTURE.md stays true: every folder that holds source files is named in
# its table, and every folder the table names exists.
source "$(dirname "$0")/common.inc"
doc=$DDL_SOURCE_DIR/ARCHITECTURE.md
[[ -f $doc ]] || fail "ARCHITECTURE.md is missing"
cd "$DDL_SOURCE_DIR"

# Folders named in the table's first column, e.g. `src/job/` or `man/`.
named=$(grep -E '^\| `' "$doc" | cut -d'|' -f2 | grep -oE '`[a-z._/]+/`' | tr -d '`' | sed 's#/$##' | sort -u)
problems=()
for folder in $named; do
  [[ -d $folder ]] || problems+=("ARCHITECTURE.md names $folder/, which does not exist")
done

# Every folder with C++ sources (src/ stages, backends and their own folders,
# cmd, rendezvous, tests) must be named, itself or through its parent under
# backends/ and tests/, which the table describes as one row each.
while IFS= read -r dir; do
  case $dir in
    backends/*|tests/*) top=${dir%%/*} ;;
    *) top=$dir ;;
  esac
  grep -qx -- "$dir" <<<"$named" || grep -qx -- "$top" <<<"$named" ||
    problems+=("$dir/ holds sources but ARCHITECTURE.md does not name it")
done < <(find src backends rendezvous cmd tests -name '*.[ch]pp' -printf '%h\n' | sort -u)

if ((${#problems[@]})); then
  printf '%s\n' "${problems[@]}" >&2
  fail "ARCHITECTURE.md is out of date"
fi
echo "ok: $(wc -w <<<"$named") folders named, all present"
