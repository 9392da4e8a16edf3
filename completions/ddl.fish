# SPDX-License-Identifier: MIT
# fish completion for ddl. Installed as share/fish/vendor_completions.d/ddl.fish;
# `ddl completions fish` prints this very file. Load it by hand with:
#   ddl completions fish | source

set -l ddl_commands run sweep hosts bench render init completions ps logs stop signal heartbeat
set -l ddl_with_common run sweep hosts bench render

function __ddl_no_command
    set -l words (commandline -opc)
    for word in $words[2..-1]
        switch $word
            case run sweep hosts bench render init completions ps logs stop signal heartbeat
                return 1
        end
    end
    return 0
end

function __ddl_bench_needs_allreduce
    set -l words (commandline -opc)
    contains -- bench $words; and not contains -- allreduce $words
end

function __ddl_after_dashdash
    contains -- -- (commandline -opc)
end

complete -c ddl -f
complete -c ddl -n __ddl_no_command -s h -l help -d 'Show help'
complete -c ddl -n __ddl_no_command -s V -l version -d 'Show the version'
complete -c ddl -n __ddl_no_command -a run -d 'Launch the job and supervise it'
complete -c ddl -n __ddl_no_command -a sweep -d 'Run a hyperparameter search, each trial a gang on free slots'
complete -c ddl -n __ddl_no_command -a hosts -d 'List the hosts, or check them'
complete -c ddl -n __ddl_no_command -a bench -d 'Run the built-in allreduce benchmark'
complete -c ddl -n __ddl_no_command -a render -d 'Print the plan, env, TF_CONFIG or hostfiles'
complete -c ddl -n __ddl_no_command -a init -d 'Write a starter job file'
complete -c ddl -n __ddl_no_command -a completions -d 'Print a shell completion script'
complete -c ddl -n __ddl_no_command -a ps -d 'List your running jobs on this machine'
complete -c ddl -n __ddl_no_command -a logs -d "Print a running job's recent output"
complete -c ddl -n __ddl_no_command -a stop -d 'Stop a running job as Ctrl-C would'
complete -c ddl -n __ddl_no_command -a signal -d "Send a signal to a running job's ranks"
complete -c ddl -n __ddl_no_command -a heartbeat -d 'From inside a rank: tell the watchdog it made progress'

# Options shared by run, hosts, bench and render; the JOB file is a positional.
set -l common "__fish_seen_subcommand_from $ddl_with_common; and not __ddl_after_dashdash"
complete -c ddl -n "$common; and not __ddl_bench_needs_allreduce" -F
complete -c ddl -n "$common" -s H -l hosts -x -a '(__fish_print_hostnames)' -d 'Hosts, e.g. node[01-04]:8,gpu-a:4'
complete -c ddl -n "$common" -l hostfile -r -F -d 'OpenMPI, DeepSpeed or MPICH hostfile'
complete -c ddl -n "$common" -l slurm -d 'Hosts from the Slurm allocation'
complete -c ddl -n "$common" -l include -x -d 'Only these hosts and slots: host1:0,1@host2'
complete -c ddl -n "$common" -l exclude -x -d 'All but these hosts and slots: host1:0@host2'
complete -c ddl -n "$common" -l backend -x -a 'auto local ssh kubernetes mpirun slurm' -d 'How ranks are started'
complete -c ddl -n "$common" -l np -x -d 'Number of ranks, or MIN:MAX (elastic)'
complete -c ddl -n "$common" -l json -d 'JSON on stdout'
complete -c ddl -n "$common" -s v -l verbose -d 'Explain choices; repeat for debug'
complete -c ddl -n "$common" -s q -l quiet -d 'Only errors on stderr'
complete -c ddl -n "__fish_seen_subcommand_from $ddl_commands; and not __ddl_after_dashdash" -s h -l help -d 'Show help'

# run
set -l run "__fish_seen_subcommand_from run; and not __ddl_after_dashdash"
complete -c ddl -n "$run" -l dry-run -d 'Print the plan and launch nothing'
complete -c ddl -n "$run" -l timeout -x -d 'Stop the job after this duration (30s, 5m, 2h)'
complete -c ddl -n "$run" -l max-restarts -x -d 'Restart the gang up to N times'
complete -c ddl -n "$run" -l log-dir -x -a '(__fish_complete_directories)' -d 'One file per rank and attempt'
complete -c ddl -n "$run" -l strict-logs -d 'Exit 3 when a rank log cannot be written'
complete -c ddl -n "$run" -l output-ranks -x -d 'Show only these ranks, e.g. 0,3-4'
complete -c ddl -n "$run" -l prefix -x -d 'Rank line prefix: {rank} {host} {local_rank} {attempt} {partial}'
complete -c ddl -n "$run" -l timestamps -d 'A UTC time before each rank line'
complete -c ddl -n "$run" -l split-logs -d 'stdout and stderr in separate rank logs'
complete -c ddl -n "$run" -l fold -d 'Identical whole outputs once, like dshbak -c'
complete -c ddl -n "$run" -s x -l env -x -a '(set -n | string replace -r \'$\' =)' -d 'Set K=V for every rank'
complete -c ddl -n "__fish_seen_subcommand_from run; and __ddl_after_dashdash" -a '(__fish_complete_subcommand --fcs-skip=2)'

# sweep
set -l sweep "__fish_seen_subcommand_from sweep; and not __ddl_after_dashdash"
complete -c ddl -n "$sweep" -l dry-run -d 'List the trials and their placement; launch nothing'
complete -c ddl -n "$sweep" -l resume -x -a '(__fish_complete_directories)' -d 'Go on with the sweep in DIR'
complete -c ddl -n "$sweep" -l dir -x -a '(__fish_complete_directories)' -d 'The sweep directory'
complete -c ddl -n "$sweep" -l timeout -x -d 'Stop a trial after this duration (30s, 5m, 2h)'
complete -c ddl -n "$sweep" -l max-restarts -x -d 'Restart a trial gang up to N times'
complete -c ddl -n "$sweep" -s x -l env -x -a '(set -n | string replace -r \'$\' =)' -d 'Set K=V for every rank of every trial'
complete -c ddl -n "__fish_seen_subcommand_from sweep; and __ddl_after_dashdash" -a '(__fish_complete_subcommand --fcs-skip=2)'

# hosts
complete -c ddl -n '__fish_seen_subcommand_from hosts' -l check -d 'Reach every host through the backend'

# bench allreduce
complete -c ddl -n __ddl_bench_needs_allreduce -a allreduce -d 'Allreduce benchmark (nccl-tests flags)'
set -l bench '__fish_seen_subcommand_from allreduce'
complete -c ddl -n "$bench" -s b -l minbytes -x -d 'Smallest size (K, M, G)'
complete -c ddl -n "$bench" -s e -l maxbytes -x -d 'Largest size (K, M, G)'
complete -c ddl -n "$bench" -s f -l stepfactor -x -d 'Size multiplier per step'
complete -c ddl -n "$bench" -s i -l stepbytes -x -d 'Size increment per step'
complete -c ddl -n "$bench" -s n -l iters -x -d 'Timed iterations per size'
complete -c ddl -n "$bench" -s w -l warmup_iters -x -d 'Warm-up iterations per size'
complete -c ddl -n "$bench" -s c -l check -x -a '0 1' -d 'Check every element'
complete -c ddl -n "$bench" -s d -l datatype -x -a 'float double int32 half bfloat16' -d 'Element type'
complete -c ddl -n "$bench" -s o -l op -x -a 'sum prod min max' -d 'Reduction'
complete -c ddl -n "$bench" -s J -l output_file -r -F -d 'Also write JSON results'
complete -c ddl -n "$bench" -l transport -x -a 'tcp nccl mpi' -d 'Allreduce transport'
complete -c ddl -n "$bench" -l streams -x -d 'TCP connections per ring neighbour'

# render
complete -c ddl -n '__fish_seen_subcommand_from render' -l format -x -a 'plan env tf-config hostfile mpich-hostfile deepspeed-hostfile json' -d 'What to print'
complete -c ddl -n '__fish_seen_subcommand_from render' -l rank -x -d 'The rank for env and tf-config'

# init
complete -c ddl -n '__fish_seen_subcommand_from init' -F
complete -c ddl -n '__fish_seen_subcommand_from init' -s t -l template -x -a 'torch tensorflow horovod jax mpi kubernetes slurm sweep' -d 'Starter template'
complete -c ddl -n '__fish_seen_subcommand_from init' -s f -l force -d 'Overwrite existing files'

# completions
complete -c ddl -n '__fish_seen_subcommand_from completions' -x -a 'bash zsh fish'

# ps, logs, stop, signal: JOB is an id or name from `ddl ps`.
complete -c ddl -n '__fish_seen_subcommand_from ps' -l json -d 'JSON on stdout'
complete -c ddl -n '__fish_seen_subcommand_from logs stop signal' -x -a "(ddl ps 2>/dev/null | awk 'NR > 1 { print \$1; print \$2 }')"
complete -c ddl -n '__fish_seen_subcommand_from logs' -s f -l follow -d 'Follow new lines until the job ends'
complete -c ddl -n '__fish_seen_subcommand_from logs' -l rank -x -d 'Only this rank'
complete -c ddl -n '__fish_seen_subcommand_from signal' -x -a 'USR1 USR2 CONT TSTP STOP INT TERM HUP KILL'
