#!/usr/bin/env bash
# The man page and the three completion scripts know every subcommand in
# `ddl --help` and every option in each subcommand's --help, so they cannot
# drift from the binary. Bash and fish are asked for real completions; zsh's
# script is read (its _ddl_SUB function must name the option).
source "$(dirname "$0")/common.inc"
man=$DDL_SOURCE_DIR/man/ddl.1
comp=$DDL_SOURCE_DIR/completions
problems=()

# CLI11 help: the words in the "Subcommands:" section, the option names elsewhere.
subcommands_of() {
  "$DDL" "$@" --help | awk '/^Subcommands:/ { s = 1; next } /^[^ ]/ { s = 0 } s && NF { print $1 }'
}
options_of() {
  local help
  help=$("$DDL" "$@" --help) || fail "ddl $* --help exited $?"
  [[ -n $help ]] || fail "ddl $* --help printed nothing"
  awk '/^[A-Za-z].*:$/ { section = $0; next }
    section != "Subcommands:" && section != "Positionals:" && /^ +-/ { print $1 }' <<<"$help" |
    tr ',' '\n' | { grep -E '^-' || true; } | sed 's/=.*//'
}

# The man page as text, "\-" as "-", fonts dropped; one command's part of it.
plain_man=$(sed 's/\\-/-/g; s/\\f[BIRP]//g; s/\\~/ /g' "$man")
man_section() {
  awk -v start=".\\\\\" ==== COMMAND: $1 ====" -v stop=".\\\\\" ==== END COMMAND: $1 ====" \
    '$0 == start { on = 1 } $0 == stop { on = 0 } on' <<<"$plain_man"
}
common_options_section=$(awk '/^\.\\" ==== COMMON OPTIONS ====/ { on = 1; next } /^\.\\" ====/ { on = 0 } on' \
  <<<"$plain_man")
has_word() { grep -qE -- "(^|[^A-Za-z0-9_-])$2(\$|[^A-Za-z0-9_-])" <<<"$1"; }

# Real completions from bash (with bash-completion when present) and fish.
bash_complete() {
  bash -c '
    [[ -f /usr/share/bash-completion/bash_completion ]] && source /usr/share/bash-completion/bash_completion
    source "$0"
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _ddl ddl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' "$comp/ddl.bash" "$@"
}
have_fish=0
if have fish fish; then have_fish=1; fi
fish_complete() { fish -c "source $comp/ddl.fish; complete -C '$*'" | cut -f1; }
zsh_function() { awk -v f="_ddl_$1() {" '$0 == f { on = 1 } on { print } on && /^}/ { exit }' "$comp/_ddl"; }

check_command() {
  local path=$1 top=${1%% *} opt
  local man_text bash_opts fish_opts zsh_text options
  options=$(options_of $path)  # a failing --help ends the test here
  man_text=$(man_section "$path")
  # A command whose nested commands are documented (bench allreduce) counts too.
  [[ -n $man_text ]] || grep -qF ".\\\" ==== COMMAND: $path " <<<"$plain_man" ||
    problems+=("man/ddl.1: no '==== COMMAND: $path ====' section")
  [[ $top == completions || $top == init ]] || man_text+=$'\n'$common_options_section
  bash_opts=$(bash_complete ddl $path -)
  ((have_fish == 0)) || fish_opts=$(fish_complete "ddl $path -")
  zsh_text=$(zsh_function "$top")
  [[ $top == run || $top == sweep || $top == hosts || $top == bench || $top == render ]] &&
    zsh_text+=$'\n'$(awk '/^_ddl_common_args=\(/ { on = 1 } on { print } on && /^\)/ { exit }' "$comp/_ddl")
  for opt in $options; do
    if ! has_word "$man_text" "$opt"; then
      problems+=("man/ddl.1: 'ddl $path' lacks $opt")
    fi
    grep -qxF -- "$opt" <<<"$bash_opts" || problems+=("completions/ddl.bash: 'ddl $path -<TAB>' lacks $opt")
    if ((have_fish)) && ! grep -qxF -- "$opt" <<<"$fish_opts"; then
      problems+=("completions/ddl.fish: 'ddl $path -<TAB>' lacks $opt")
    fi
    has_word "$zsh_text" "$opt" || problems+=("completions/_ddl: _ddl_$top lacks $opt")
  done
}

commands=$(subcommands_of)
[[ -n $commands ]] || fail "ddl --help lists no subcommands"
top_bash=$(bash_complete ddl '')
((have_fish == 0)) || top_fish=$(fish_complete "ddl ")
for cmd in $commands; do
  grep -qxF "$cmd" <<<"$top_bash" || problems+=("completions/ddl.bash: 'ddl <TAB>' lacks $cmd")
  if ((have_fish)) && ! grep -qxF "$cmd" <<<"$top_fish"; then
    problems+=("completions/ddl.fish: 'ddl <TAB>' lacks $cmd")
  fi
  grep -qE "^ +'$cmd:" "$comp/_ddl" || problems+=("completions/_ddl: the command list lacks $cmd")
  has_word "$(grep -E '^\.SY' <<<"$plain_man")" "$cmd" || problems+=("man/ddl.1: SYNOPSIS lacks $cmd")
  nested=$(subcommands_of "$cmd")
  if [[ -n $nested ]]; then
    for sub in $nested; do
      grep -qxF "$sub" <<<"$(bash_complete ddl "$cmd" '')" ||
        problems+=("completions/ddl.bash: 'ddl $cmd <TAB>' lacks $sub")
      check_command "$cmd $sub"
    done
  else
    check_command "$cmd"
  fi
done

if ((${#problems[@]} > 0)); then
  printf '%s\n' "${problems[@]}" >&2
  fail "${#problems[@]} documentation or completion gaps (list above)"
fi
