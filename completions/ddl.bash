# bash completion for ddl                                  -*- shell-script -*-
# SPDX-License-Identifier: MIT
# Installed as share/bash-completion/completions/ddl; `ddl completions bash`
# prints this very file. Load it by hand with: source <(ddl completions bash)

_ddl_commands='run sweep hosts bench render init completions ps logs stop signal heartbeat
  torchrun mpirun horovodrun deepspeed'
_ddl_common_opts='-H --hosts --hostfile --slurm --include --exclude --backend --np -F --ssh-config --json -v --verbose
  -q --quiet -h --help'
_ddl_run_opts="$_ddl_common_opts --dry-run --name --timeout --max-restarts --log-dir --strict-logs
  --output-ranks --stdin --prefix --timestamps --split-logs --fold -x --env --env-file --bind --mpi --preflight --no-preflight"
_ddl_sweep_opts="$_ddl_common_opts --dry-run --report --resume --dir --timeout --max-restarts -x --env --preflight --no-preflight"
_ddl_hosts_opts="$_ddl_common_opts --check --bench"
_ddl_bench_opts="$_ddl_common_opts -b --minbytes -e --maxbytes -f --stepfactor -i --stepbytes
  -n --iters -w --warmup_iters -c --check -d --datatype -o --op -J --output_file --transport --streams"
_ddl_render_opts="$_ddl_common_opts --format --rank"
_ddl_init_opts='-t --template -f --force -h --help'
_ddl_live_opts='-h --help'
_ddl_logs_opts='-f --follow --rank -h --help'
_ddl_signals='USR1 USR2 CONT TSTP STOP INT TERM HUP KILL'

# The personalities: their launcher's options and ddl's own; those that take
# a value, and (mpirun's --mca) two.
_ddl_torchrun_opts='--nnodes --nproc-per-node --nproc_per_node --rdzv-backend --rdzv_backend --rdzv-endpoint --rdzv_endpoint --rdzv-id --rdzv_id --rdzv-conf --rdzv_conf --standalone --max-restarts --max_restarts --monitor-interval --monitor_interval --start-method --start_method --event-log-handler --event_log_handler --role -m --module --no-python --no_python --run-path --run_path --log-dir --log_dir -r --redirects -t --tee --local-ranks-filter --local_ranks_filter --node-rank --node_rank --master-addr --master_addr --master-port --master_port --local-addr --local_addr --logs-specs --logs_specs --numa-binding --numa_binding --signals-to-handle --signals_to_handle -H --hosts --hostfile --backend --python --job --name -F --ssh-config --timeout --dry-run -v --verbose -q --quiet --stdin --preflight --no-preflight -h --help'
_ddl_torchrun_values='--nnodes --nproc-per-node --nproc_per_node --rdzv-backend --rdzv_backend --rdzv-endpoint --rdzv_endpoint --rdzv-id --rdzv_id --rdzv-conf --rdzv_conf --max-restarts --max_restarts --monitor-interval --monitor_interval --start-method --start_method --event-log-handler --event_log_handler --role --log-dir --log_dir -r --redirects -t --tee --local-ranks-filter --local_ranks_filter --node-rank --node_rank --master-addr --master_addr --master-port --master_port --local-addr --local_addr --logs-specs --logs_specs --numa-binding --numa_binding --signals-to-handle --signals_to_handle -H --hosts --hostfile --backend --python --job --name -F --ssh-config --timeout --stdin'
_ddl_torchrun_values2=''
_ddl_mpirun_opts='-np --np -n --n -c -H --host -host --hostfile --machinefile -x --mca --gmca --bind-to --map-by --rank-by -N --npernode --oversubscribe --wdir -wd --tag-output --timestamp-output --output-filename --allow-run-as-root -q --quiet -v --verbose --timeout --do-not-launch --prefix --report-bindings --display-map -V --version --job --name -F --ssh-config --dry-run --stdin --preflight --no-preflight -h --help -hostfile -machinefile -mca -gmca -bind-to -map-by -rank-by -npernode -oversubscribe -wdir -tag-output -timestamp-output -output-filename -allow-run-as-root -quiet -verbose -timeout -do-not-launch -prefix -report-bindings -display-map -version -job -name -ssh-config -dry-run -stdin -help'
_ddl_mpirun_values='-np --np -n --n -c -H --host -host --hostfile --machinefile -x --bind-to --map-by --rank-by -N --npernode --wdir -wd --output-filename --timeout --prefix --job --name -F --ssh-config --stdin -hostfile -machinefile -bind-to -map-by -rank-by -npernode -wdir -output-filename -timeout -prefix -job -name -ssh-config -stdin'
_ddl_mpirun_values2='--mca --gmca -mca -gmca'
_ddl_horovodrun_opts='-v --version -np --num-proc -cb --check-build --disable-cache --start-timeout --network-interfaces --network-interface --output-filename --verbose --config-file -p --ssh-port -i --ssh-identity-file --fusion-threshold-mb --cycle-time-ms --cache-capacity --hierarchical-allreduce --no-hierarchical-allreduce --hierarchical-allgather --no-hierarchical-allgather --torus-allreduce --no-torus-allreduce --autotune --no-autotune --autotune-log-file --autotune-warmup-samples --autotune-steps-per-sample --autotune-bayes-opt-max-samples --autotune-gaussian-process-noise --min-np --min-num-proc --max-np --max-num-proc --slots-per-host --elastic-timeout --reset-limit --blacklist-cooldown-range --timeline-filename --timeline-mark-cycles --no-timeline-mark-cycles --no-stall-check --stall-check --stall-check-warning-time-seconds --stall-check-shutdown-time-seconds --mpi-threads-disable --no-mpi-threads-disable --mpi-args --tcp --binding-args --num-nccl-streams --thread-affinity --gloo-timeout-seconds --log-level --log-with-timestamp --log-without-timestamp --log-hide-timestamp --no-log-hide-timestamp -prefix-timestamp --prefix-output-with-timestamp -H --hosts -hostfile --hostfile --host-discovery-script --gloo --mpi --jsrun --backend --job --name -F --ssh-config --timeout --dry-run -q --quiet --stdin --preflight --no-preflight -h --help'
_ddl_horovodrun_values='-np --num-proc --start-timeout --network-interfaces --network-interface --output-filename --config-file -p --ssh-port -i --ssh-identity-file --fusion-threshold-mb --cycle-time-ms --cache-capacity --autotune-log-file --autotune-warmup-samples --autotune-steps-per-sample --autotune-bayes-opt-max-samples --autotune-gaussian-process-noise --min-np --min-num-proc --max-np --max-num-proc --slots-per-host --elastic-timeout --reset-limit --timeline-filename --stall-check-warning-time-seconds --stall-check-shutdown-time-seconds --mpi-args --binding-args --num-nccl-streams --thread-affinity --gloo-timeout-seconds --log-level -H --hosts -hostfile --hostfile --host-discovery-script --backend --job --name -F --ssh-config --timeout --stdin'
_ddl_horovodrun_values2='--blacklist-cooldown-range'
_ddl_deepspeed_opts='-H --hostfile -i --include -e --exclude --num_nodes --min_elastic_nodes --max_elastic_nodes --num_gpus --num_accelerators --master_port --master_addr --node_rank --launcher --launcher_args --module --no_python --no_local_rank --no_ssh --no_ssh_check --force_multi --save_pid --enable_each_rank_log --autotuning --elastic_training --bind_cores_to_rank --bind_core_list --ssh_port --venv_script --log_level -q --quiet --hosts --python --job --name -F --ssh-config --timeout --dry-run -v --verbose --stdin --preflight --no-preflight -h --help'
_ddl_deepspeed_values='-H --hostfile -i --include -e --exclude --num_nodes --min_elastic_nodes --max_elastic_nodes --num_gpus --num_accelerators --master_port --master_addr --node_rank --launcher --launcher_args --enable_each_rank_log --autotuning --bind_core_list --ssh_port --venv_script --log_level --hosts --python --job --name -F --ssh-config --timeout --stdin'
_ddl_deepspeed_values2=''

# The ids and names of the running jobs, for ddl logs/stop/signal.
_ddl_jobs() { ddl ps 2>/dev/null | awk 'NR > 1 { print $1; print $2 }'; }

# Completes the value of option $1 of subcommand $2; returns 1 when $1 takes none.
_ddl_option_value() {
    local opt=$1 cmd=$2 cur=$3
    case $cmd:$opt in
        *:--backend) COMPREPLY=($(compgen -W 'auto local ssh kubernetes mpirun slurm' -- "$cur")) ;;
        run:--mpi) COMPREPLY=($(compgen -W 'mpirun pmix auto' -- "$cur")) ;;
        *:--hostfile | bench:-J | bench:--output_file) _ddl_files "$cur" ;;
        *:-F | *:--ssh-config | *:--job | *:--python | mpirun:--machinefile | horovodrun:-hostfile) _ddl_files "$cur" ;;
        deepspeed:-H | horovodrun:--host-discovery-script | horovodrun:--config-file | horovodrun:-i) _ddl_files "$cur" ;;
        horovodrun:--ssh-identity-file) _ddl_files "$cur" ;;
        torchrun:--nproc-per-node | torchrun:--nproc_per_node) COMPREPLY=($(compgen -W 'gpu cpu auto' -- "$cur")) ;;
        torchrun:--start-method | torchrun:--start_method) COMPREPLY=($(compgen -W 'spawn fork forkserver' -- "$cur")) ;;
        torchrun:--rdzv-backend | torchrun:--rdzv_backend) COMPREPLY=($(compgen -W 'static c10d etcd etcd-v2' -- "$cur")) ;;
        torchrun:--log-dir | torchrun:--log_dir | deepspeed:--enable_each_rank_log | *:--output-filename | mpirun:--wdir | \
            mpirun:-wdir | mpirun:-wd | mpirun:--prefix)
            compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
        mpirun:--bind-to | mpirun:-bind-to) COMPREPLY=($(compgen -W 'none hwthread core l3cache socket numa board' -- "$cur")) ;;
        mpirun:--map-by | mpirun:-map-by) COMPREPLY=($(compgen -W 'slot node hwthread core socket numa ppr:' -- "$cur")) ;;
        mpirun:--rank-by | mpirun:-rank-by) COMPREPLY=($(compgen -W 'slot node core hwthread socket numa board' -- "$cur")) ;;
        mpirun:-x) compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -e -- "$cur")) ;;
        deepspeed:--launcher) COMPREPLY=($(compgen -W 'pdsh openmpi slurm' -- "$cur")) ;;
        deepspeed:--log_level) COMPREPLY=($(compgen -W 'debug info warning error critical' -- "$cur")) ;;
        deepspeed:--autotuning) COMPREPLY=($(compgen -W 'tune run' -- "$cur")) ;;
        horovodrun:--log-level) COMPREPLY=($(compgen -W 'TRACE DEBUG INFO WARNING ERROR FATAL' -- "$cur")) ;;
        *:-H | *:--hosts) COMPREPLY=($(compgen -A hostname -- "$cur")) ;;
        *:--include | *:--exclude | *:--np | run:--timeout | run:--max-restarts | render:--rank | logs:--rank) ;;
        run:--output-ranks | run:--prefix) ;;
        *:--stdin) COMPREPLY=($(compgen -W '0 all none' -- "$cur")) ;;
        sweep:--timeout | sweep:--max-restarts) ;;
        sweep:--resume | sweep:--dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
        sweep:-x | sweep:--env) compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -e -S = -- "$cur")) ;;
        run:--env-file) _ddl_files "$cur" ;;
        run:--bind) COMPREPLY=($(compgen -W 'none core numa gpu' -- "$cur")) ;;
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
        *)
            # Another personality option that takes a value: nothing to offer.
            local values="_ddl_${cmd}_values" values2="_ddl_${cmd}_values2"
            [[ " ${!values-} ${!values2-} " == *" $opt "* ]] || return 1
            ;;
    esac
    return 0
}

# A personality's words: its options until the program, then files.
_ddl_persona() {
    local cmd=$1 cur=$2 prev=$3 i word skip=0
    local opts="_ddl_${cmd}_opts" values="_ddl_${cmd}_values" values2="_ddl_${cmd}_values2"
    for ((i = 2; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $word == = ]]; then skip=1; continue; fi
        if ((skip > 0)); then ((skip--)); continue; fi
        if [[ $word == -* ]]; then
            [[ " ${!values} " == *" $word "* ]] && skip=1
            [[ " ${!values2} " == *" $word "* ]] && skip=2
            continue
        fi
        _ddl_files "$cur"  # the program has started: its own words
        return 0
    done
    if [[ $prev == -* ]] && _ddl_option_value "$prev" "$cmd" "$cur"; then
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "${!opts}" -- "$cur"))
    else
        _ddl_files "$cur"
    fi
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
        torchrun | mpirun | horovodrun | deepspeed)
            _ddl_persona "$cmd" "$cur" "$prev"
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
