# bash completion for ddl                                  -*- shell-script -*-
# SPDX-License-Identifier: MIT
# Installed as share/bash-completion/completions/ddl; `ddl completions bash`
# prints this very file. Load it by hand with: source <(ddl completions bash)

_ddl_commands='run sweep hosts bench render init completions ps logs stop signal heartbeat'
_ddl_common_opts='-H --hosts --hostfile --slurm --include --exclude --backend --np --json -v --verbose -q --quiet -h --help'
_ddl_run_opts="$_ddl_common_opts --dry-run --timeout --max-restarts --log-dir --strict-logs
  --output-ranks --prefix --timestamps --split-logs --fold -x --env"
_ddl_sweep_opts="$_ddl_common_opts --dry-run --resume --dir --timeout --max-restarts -x --env"
_ddl_hosts_opts="$_ddl_common_opts --check"
_ddl_bench_opts="$_ddl_common_opts -b --minbytes -e --maxbytes -f --stepfactor -i --stepbytes
  -n --iters -w --warmup_iters -c --check -d --datatype -o --op -J --output_file --transport --streams"
_ddl_render_opts="$_ddl_common_opts --format --rank"
_ddl_init_opts='-t --template -f --force -h --help'
_ddl_live_opts='-h --help'
_ddl_logs_opts='-f --follow --rank -h --help'
_ddl_signals='USR1 USR2 CONT TSTP STOP INT TERM HUP KILL'

# The ids and names of the running jobs, for ddl logs/stop/signal.
_ddl_jobs() { ddl ps 2>/dev/null | awk 'NR > 1 { print $1; print $2 }'; }

# Completes the value of option $1 of subcommand $2; returns 1 when $1 takes none.
_ddl_option_value() {
    local opt=$1 cmd=$2 cur=$3
    case $cmd:$opt in
        *:--backend) COMPREPLY=($(compgen -W 'auto local ssh kubernetes mpirun slurm' -- "$cur")) ;;
        *:--hostfile | bench:-J | bench:--output_file) _ddl_files "$cur" ;;
        *:-H | *:--hosts) COMPREPLY=($(compgen -A hostname -- "$cur")) ;;
        *:--include | *:--exclude | *:--np | run:--timeout | run:--max-restarts | render:--rank | logs:--rank) ;;
        run:--output-ranks | run:--prefix) ;;
        sweep:--timeout | sweep:--max-restarts) ;;
        sweep:--resume | sweep:--dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
        sweep:-x | sweep:--env) compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -e -S = -- "$cur")) ;;
        run:--log-dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
        run:-x | run:--env) compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -e -S = -- "$cur")) ;;
        render:--format)
            COMPREPLY=($(compgen -W 'plan env tf-config hostfile mpich-hostfile deepspeed-hostfile json' -- "$cur")) ;;
        bench:--transport) COMPREPLY=($(compgen -W 'tcp nccl mpi' -- "$cur")) ;;
        bench:-d | bench:--datatype) COMPREPLY=($(compgen -W 'float double int32 half bfloat16' -- "$cur")) ;;
        bench:-o | bench:--op) COMPREPLY=($(compgen -W 'sum prod min max' -- "$cur")) ;;
        bench:-c | bench:--check) COMPREPLY=($(compgen -W '0 1' -- "$cur")) ;;
        bench:-b | bench:--minbytes | bench:-e | bench:--maxbytes | bench:-i | bench:--stepbytes) ;;
        bench:-f | bench:--stepfactor | bench:-n | bench:--iters | bench:-w | bench:--warmup_iters) ;;
        init:-t | init:--template)
            COMPREPLY=($(compgen -W 'torch tensorflow horovod jax mpi kubernetes slurm sweep' -- "$cur")) ;;
        *) return 1 ;;
    esac
    return 0
}

_ddl_files() {
    compopt -o filenames 2>/dev/null
    local IFS=$'\n'
    COMPREPLY=($(compgen -f -- "$1"))
}

_ddl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=''
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # The subcommand (bench counts with its allreduce) and a "--" seen so far.
    local cmd='' dashdash=0 i word
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $word == -- ]]; then
            dashdash=$i
            break
        fi
        [[ -z $cmd && $word != -* ]] && cmd=$word
    done

    # After "--": the command to run, then its arguments.
    if ((dashdash > 0)); then
        if ((COMP_CWORD == dashdash + 1)); then
            COMPREPLY=($(compgen -c -- "$cur"))
        else
            _ddl_files "$cur"
        fi
        return 0
    fi

    # --opt=value is split by COMP_WORDBREAKS into "--opt" "=" "value".
    if [[ $cur == = ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        cur=''
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-h --help -V --version' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_ddl_commands" -- "$cur"))
        fi
        return 0
    fi

    if [[ $cmd == bench ]]; then
        local has_allreduce=0 words
        for ((i = 2; i < COMP_CWORD; i++)); do
            [[ ${COMP_WORDS[i]} == allreduce ]] && has_allreduce=1
        done
        if ((has_allreduce == 0)); then
            [[ $cur == -* ]] && words='-h --help' || words=allreduce
            COMPREPLY=($(compgen -W "$words" -- "$cur"))
            return 0
        fi
    fi

    if [[ $prev == -* ]] && _ddl_option_value "$prev" "$cmd" "$cur"; then
        return 0
    fi

    local opts
    case $cmd in
        run) opts=$_ddl_run_opts ;;
        sweep) opts=$_ddl_sweep_opts ;;
        hosts) opts=$_ddl_hosts_opts ;;
        bench) opts=$_ddl_bench_opts ;;
        render) opts=$_ddl_render_opts ;;
        init) opts=$_ddl_init_opts ;;
        ps) opts='--json -h --help' ;;
        logs | stop | signal)
            if [[ $cur == -* ]]; then
                [[ $cmd == logs ]] && opts=$_ddl_logs_opts || opts=$_ddl_live_opts
                COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            elif [[ $cmd == signal && $prev != signal ]]; then
                COMPREPLY=($(compgen -W "$_ddl_signals" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$(_ddl_jobs)" -- "$cur"))
            fi
            return 0
            ;;
        heartbeat)
            COMPREPLY=($(compgen -W '-h --help' -- "$cur"))
            return 0
            ;;
        completions)
            [[ $cur == -* ]] && opts='-h --help' || opts='bash zsh fish'
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return 0
            ;;
        *) return 0 ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        [[ $cmd == run || $cmd == sweep ]] && COMPREPLY+=($(compgen -W '--' -- "$cur"))
    else
        _ddl_files "$cur"
    fi
    return 0
}

complete -F _ddl ddl
