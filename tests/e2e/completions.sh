#!/usr/bin/env bash
# ddl completions: prints the installed scripts, which parse in their shells,
# and the bash one really completes subcommands, options and their values.
source "$(dirname "$0")/common.inc"
dir=$DDL_SOURCE_DIR/completions

expect_exit 0 "$DDL" completions bash
cmp "$t/out" "$dir/ddl.bash" || fail "ddl completions bash differs from completions/ddl.bash"
bash -n "$t/out" || fail "bash cannot parse the bash completion"
expect_exit 0 "$DDL" completions zsh
cmp "$t/out" "$dir/_ddl" || fail "ddl completions zsh differs from completions/_ddl"
if have zsh zsh; then zsh -n "$t/out" || fail "zsh cannot parse _ddl"; fi
expect_exit 0 "$DDL" completions fish
cmp "$t/out" "$dir/ddl.fish" || fail "ddl completions fish differs from completions/ddl.fish"
if have fish fish; then fish -n "$t/out" || fail "fish cannot parse ddl.fish"; fi

expect_exit 2 "$DDL" completions tcsh
expect_contains "$t/err" "tcsh"

# zsh, as a user's interactive shell runs it: compinit, then our script,
# then a line typed with two TABs; the list zsh shows must hold every word.
zsh_shows() {
  local line=$1; shift
  cat >"$t/zsh-complete.zsh" <<'EOS'
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='> '; autoload -Uz compinit; compinit -u -D; source <(\"\$DDL\" completions zsh); print READY"
zpty -r z out '*READY*'
zpty -w -n z "$1"$'\t\t'
# Read until every word has shown up (or the caller's timeout).
out=""
while true; do
  zpty -r -t z chunk && out+=$chunk || sleep 0.1
  missing=0
  for word in "${@:2}"; do [[ $out == *"$word"* ]] || missing=1; done
  (( missing )) || break
done
print -r -- "$out"
zpty -d z
EOS
  timeout 20 zsh -f "$t/zsh-complete.zsh" "$line" "$@" >"$t/zsh-out" 2>&1 ||
    { cat -v "$t/zsh-out"; fail "zsh did not complete '$line'"; }
  local word
  for word in "$@"; do
    grep -qF -- "$word" "$t/zsh-out" || { cat -v "$t/zsh-out"; fail "zsh: '$line<TAB>' lacks $word"; }
  done
}
if have zsh zsh && zsh -fc 'zmodload zsh/zpty' 2>/dev/null; then
  zsh_shows 'ddl ' bench completions deepspeed heartbeat horovodrun hosts init logs mpirun ps render run signal stop \
    sweep torchrun
  zsh_shows 'ddl torchrun --nproc' --nproc-per-node --nproc_per_node
  zsh_shows 'ddl run --back' --backend= auto kubernetes local mpirun slurm ssh
  zsh_shows 'ddl bench allreduce -d ' bfloat16 double float half int32
fi

# Bash, as a user's shell runs it: bash-completion loaded, then our script.
bc=/usr/share/bash-completion/bash_completion
[[ -f $bc ]] || skip "bash-completion is not installed"
cat >"$t/complete.bash" <<EOS
source $bc
source <("$DDL" completions bash)
complete_words() {
  COMP_WORDS=("\$@"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1))
  COMP_LINE="\$*"; COMP_POINT=\${#COMP_LINE}; COMPREPLY=()
  _ddl ddl "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
  printf '%s\n' "\${COMPREPLY[@]}" | sort | tr '\n' ' '; echo
}
complete -p ddl
complete_words ddl ''
complete_words ddl r
complete_words ddl run --
complete_words ddl run --backend ''
complete_words ddl bench ''
complete_words ddl bench allreduce -d ''
complete_words ddl bench allreduce -o ''
complete_words ddl bench allreduce --transport ''
complete_words ddl render --format ''
complete_words ddl init --template ''
complete_words ddl completions ''
complete_words ddl hosts --
complete_words ddl run --hostfile hostf
complete_words ddl run job.toml -- python3 tra
complete_words ddl torchrun --nproc-per-node ''
complete_words ddl torchrun --nproc-per-node 4 --standalone tra
complete_words ddl mpirun -np 2 ./ring_c --n
complete_words ddl deepspeed --launcher ''
EOS
cd "$t" && touch hostfile.txt train.py
timeout 20 bash "$t/complete.bash" >"$t/got" 2>"$t/err" || { cat "$t/err"; fail "completion script failed"; }
line() { sed -n "${1}p" "$t/got"; }
expect_line() { [[ $(line "$1") == "$2" ]] || fail "completion $1: got '$(line "$1")', want '$2'"; }
expect_line 1 "complete -F _ddl ddl"
expect_line 2 "bench completions deepspeed heartbeat horovodrun hosts init logs mpirun ps render run signal stop sweep torchrun "
expect_line 3 "render run "
for opt in --hosts --hostfile --backend --np --json --verbose --quiet --help --dry-run --timeout \
    --max-restarts --log-dir --env --output-ranks --prefix --timestamps --split-logs --fold --name --ssh-config; do
  [[ " $(line 4) " == *" $opt "* ]] || fail "'ddl run --<TAB>' does not offer $opt: $(line 4)"
done
expect_line 5 "auto kubernetes local mpirun slurm ssh "
expect_line 6 "allreduce "
expect_line 7 "bfloat16 double float half int32 "
expect_line 8 "max min prod sum "
expect_line 9 "mpi nccl tcp "
expect_line 10 "deepspeed-hostfile env hostfile json mpich-hostfile plan tf-config "
expect_line 11 "horovod jax kubernetes mpi slurm sweep tensorflow torch "
expect_line 12 "bash fish zsh "
[[ " $(line 13) " == *" --check "* ]] || fail "'ddl hosts --<TAB>' does not offer --check: $(line 13)"
expect_line 14 "hostfile.txt "
expect_line 15 "train.py "
expect_line 16 "auto cpu gpu "
expect_line 17 "train.py "
expect_line 18 " "
expect_line 19 "openmpi pdsh slurm "
