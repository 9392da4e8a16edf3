# SPDX-License-Identifier: MIT
# fish completion for ddl. Installed as share/fish/vendor_completions.d/ddl.fish;
# `ddl completions fish` prints this very file. Load it by hand with:
#   ddl completions fish | source

set -l ddl_commands run sweep hosts bench render init completions ps logs stop signal heartbeat \
    torchrun mpirun horovodrun deepspeed
set -l ddl_with_common run sweep hosts bench render

function __ddl_no_command
    set -l words (commandline -opc)
    for word in $words[2..-1]
        switch $word
            case run sweep hosts bench render init completions ps logs stop signal heartbeat \
                torchrun mpirun horovodrun deepspeed
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
complete -c ddl -n __ddl_no_command -a torchrun -d 'Run a torchrun command line under ddl'
complete -c ddl -n __ddl_no_command -a mpirun -d 'Run an Open MPI mpirun command line under ddl'
complete -c ddl -n __ddl_no_command -a horovodrun -d 'Run a horovodrun command line under ddl'
complete -c ddl -n __ddl_no_command -a deepspeed -d 'Run a DeepSpeed launcher command line under ddl'

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
complete -c ddl -n "$common" -s F -l ssh-config -r -F -d 'OpenSSH config file, as ssh -F'
complete -c ddl -n "$common" -l json -d 'JSON on stdout'
complete -c ddl -n "$common" -s v -l verbose -d 'Explain choices; repeat for debug'
complete -c ddl -n "$common" -s q -l quiet -d 'Only errors on stderr'
complete -c ddl -n "__fish_seen_subcommand_from $ddl_commands; and not __ddl_after_dashdash" -s h -l help -d 'Show help'

# run
set -l run "__fish_seen_subcommand_from run; and not __ddl_after_dashdash"
complete -c ddl -n "$run" -l dry-run -d 'Print the plan and launch nothing'
complete -c ddl -n "$run" -l name -x -d "The job's name (ddl ps, DDL_JOB)"
complete -c ddl -n "$run" -l timeout -x -d 'Stop the job after this duration (30s, 5m, 2h)'
complete -c ddl -n "$run" -l max-restarts -x -d 'Restart the gang up to N times'
complete -c ddl -n "$run" -l log-dir -x -a '(__fish_complete_directories)' -d 'One file per rank and attempt'
complete -c ddl -n "$run" -l strict-logs -d 'Exit 3 when a rank log cannot be written'
complete -c ddl -n "$run" -l output-ranks -x -d 'Show only these ranks, e.g. 0,3-4'
complete -c ddl -n "$run" -l stdin -x -a '0 all none' -d "Which ranks read ddl's stdin (default 0)"
complete -c ddl -n "$run" -l prefix -x -d 'Rank line prefix: {rank} {host} {local_rank} {attempt} {partial}'
complete -c ddl -n "$run" -l timestamps -d 'A UTC time before each rank line'
complete -c ddl -n "$run" -l split-logs -d 'stdout and stderr in separate rank logs'
complete -c ddl -n "$run" -l fold -d 'Identical whole outputs once, like dshbak -c'
complete -c ddl -n "$run" -l preflight -d 'Check the network among the hosts first'
complete -c ddl -n "$run" -l no-preflight -d 'No check, whatever the job file says'
complete -c ddl -n "$run" -s x -l env -x -a '(set -n | string replace -r \'$\' =)' -d 'Set K=V for every rank'
complete -c ddl -n "$run" -l env-file -r -F -d 'NAME=VALUE lines for every rank, never on a command line'
complete -c ddl -n "$run" -l bind -x -a 'none core numa gpu' -d 'Pin each rank to its cores, NUMA node or GPU\'s node'
complete -c ddl -n "$run" -l mpi -x -a 'mpirun pmix auto' -d 'How MPI ranks become one world (pmix: ddl hosts PMIx)'
complete -c ddl -n "__fish_seen_subcommand_from run; and __ddl_after_dashdash" -a '(__fish_complete_subcommand --fcs-skip=2)'

# sweep
set -l sweep "__fish_seen_subcommand_from sweep; and not __ddl_after_dashdash"
complete -c ddl -n "$sweep" -l dry-run -d 'List the trials and their placement; launch nothing'
complete -c ddl -n "$sweep" -l report -d 'Print the path of SWEEP_DIR/report.html'
complete -c ddl -n "$sweep" -l preflight -d "Check the network among each trial's hosts first"
complete -c ddl -n "$sweep" -l no-preflight -d "No check before a trial's ranks start"
complete -c ddl -n "$sweep" -l resume -x -a '(__fish_complete_directories)' -d 'Go on with the sweep in DIR'
complete -c ddl -n "$sweep" -l dir -x -a '(__fish_complete_directories)' -d 'The sweep directory'
complete -c ddl -n "$sweep" -l timeout -x -d 'Stop a trial after this duration (30s, 5m, 2h)'
complete -c ddl -n "$sweep" -l max-restarts -x -d 'Restart a trial gang up to N times'
complete -c ddl -n "$sweep" -s x -l env -x -a '(set -n | string replace -r \'$\' =)' -d 'Set K=V for every rank of every trial'
complete -c ddl -n "__fish_seen_subcommand_from sweep; and __ddl_after_dashdash" -a '(__fish_complete_subcommand --fcs-skip=2)'

# hosts
complete -c ddl -n '__fish_seen_subcommand_from hosts' -l check -d 'Reach every host through the backend'
complete -c ddl -n '__fish_seen_subcommand_from hosts' -l bench -d 'With --check: then the network among them'

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

# The personalities: their launcher's options and ddl's own, then the
# program and its words (files).
set -l persona_torchrun "__fish_seen_subcommand_from torchrun; and not __ddl_after_dashdash"
set -l persona_mpirun "__fish_seen_subcommand_from mpirun; and not __ddl_after_dashdash"
set -l persona_horovodrun "__fish_seen_subcommand_from horovodrun; and not __ddl_after_dashdash"
set -l persona_deepspeed "__fish_seen_subcommand_from deepspeed; and not __ddl_after_dashdash"
complete -c ddl -n '__fish_seen_subcommand_from torchrun mpirun horovodrun deepspeed' -F
complete -c ddl -n "$persona_torchrun" -l nnodes -r -d 'Hosts: the first N of ddl\'s; MIN:MAX: ddl\'s elastic range'
complete -c ddl -n "$persona_torchrun" -l nproc-per-node -l nproc_per_node -r -d 'Ranks on every host'
complete -c ddl -n "$persona_torchrun" -l rdzv-backend -l rdzv_backend -r -d 'Accepted; ddl runs its own rendezvous'
complete -c ddl -n "$persona_torchrun" -l rdzv-endpoint -l rdzv_endpoint -r -d 'Must be this machine or the first host (static: PORT is MASTER_PORT)'
complete -c ddl -n "$persona_torchrun" -l rdzv-id -l rdzv_id -r -d 'The job\'s name (TORCHELASTIC_RUN_ID)'
complete -c ddl -n "$persona_torchrun" -l rdzv-conf -l rdzv_conf -r -d 'join_timeout=S: [rendezvous] timeout'
complete -c ddl -n "$persona_torchrun" -l standalone -d 'One node'
complete -c ddl -n "$persona_torchrun" -l max-restarts -l max_restarts -r -d 'Restart the whole gang up to N times'
complete -c ddl -n "$persona_torchrun" -l monitor-interval -l monitor_interval -r -d 'Accepted; ddl watches ranks continuously'
complete -c ddl -n "$persona_torchrun" -l start-method -l start_method -r -d 'Accepted; every rank is a process of its own'
complete -c ddl -n "$persona_torchrun" -l event-log-handler -l event_log_handler -r -d 'Accepted; ddl --json has the events'
complete -c ddl -n "$persona_torchrun" -l role -r -d 'ROLE_NAME of every rank'
complete -c ddl -n "$persona_torchrun" -s m -l module -d 'Run the script as python -m MODULE'
complete -c ddl -n "$persona_torchrun" -l no-python -l no_python -d 'Run the script itself, not with python'
complete -c ddl -n "$persona_torchrun" -l run-path -l run_path -d 'Run the script with python (takes precedence over --no-python)'
complete -c ddl -n "$persona_torchrun" -l log-dir -l log_dir -r -d 'ddl\'s DIR/rank-R.attempt-A.log per rank'
complete -c ddl -n "$persona_torchrun" -s r -l redirects -r -d 'Only 0: ddl always shows rank output'
complete -c ddl -n "$persona_torchrun" -s t -l tee -r -d 'With --log-dir: every stream of every rank goes to its log'
complete -c ddl -n "$persona_torchrun" -l local-ranks-filter -l local_ranks_filter -r -d 'Show only these local ranks'
complete -c ddl -n "$persona_torchrun" -l node-rank -l node_rank -r -d 'Only 0: ddl starts and numbers every node'
complete -c ddl -n "$persona_torchrun" -l master-addr -l master_addr -r -d 'Must be this machine or the first host'
complete -c ddl -n "$persona_torchrun" -l master-port -l master_port -r -d '[torch] master_port (0: a free one)'
complete -c ddl -n "$persona_torchrun" -l local-addr -l local_addr -r -d 'Accepted; ddl finds each host\'s address'
complete -c ddl -n "$persona_torchrun" -l logs-specs -l logs_specs -r -d 'Refused: ddl writes the logs itself'
complete -c ddl -n "$persona_torchrun" -l numa-binding -l numa_binding -x -a 'node' -d 'Only node: each rank bound to the NUMA node of its GPU (--bind gpu)'
complete -c ddl -n "$persona_torchrun" -l signals-to-handle -l signals_to_handle -r -d 'Accepted; ddl forwards SIGINT and SIGTERM (and USR1, USR2, CONT, TSTP)'
complete -c ddl -n "$persona_torchrun" -s H -l hosts -r -d 'ddl\'s hosts, e.g. node[01-04]:8,gpu-a:4'
complete -c ddl -n "$persona_torchrun" -l hostfile -r -d 'Hosts from an Open MPI, DeepSpeed or MPICH hostfile'
complete -c ddl -n "$persona_torchrun" -l backend -r -d 'ddl backend: auto, local, ssh, kubernetes, mpirun or slurm'
complete -c ddl -n "$persona_torchrun" -l python -r -d 'Interpreter the script runs with (default: [job] python, else python3)'
complete -c ddl -n "$persona_torchrun" -l job -r -d 'ddl job file (TOML) whose settings apply under these options'
complete -c ddl -n "$persona_torchrun" -l name -r -d 'The job\'s name in ddl ps (default: ddl)'
complete -c ddl -n "$persona_torchrun" -s F -l ssh-config -r -d 'OpenSSH config to read ("none": none)'
complete -c ddl -n "$persona_torchrun" -l timeout -r -d 'End the whole job after DUR (30s, 2h); exit 124'
complete -c ddl -n "$persona_torchrun" -l dry-run -d 'Print ddl\'s plan (hosts, ranks, env, command); launch nothing'
complete -c ddl -n "$persona_torchrun" -l stdin -x -a '0 all none' -d 'Which ranks read ddl\'s stdin (default: rank 0)'
complete -c ddl -n "$persona_torchrun" -l preflight -d 'Check the network among the hosts first; a slow host stops the job (exit 3)'
complete -c ddl -n "$persona_torchrun" -l no-preflight -d 'No check before the ranks start'
complete -c ddl -n "$persona_torchrun" -s v -l verbose -d 'ddl explains its choices (repeat for debug)'
complete -c ddl -n "$persona_torchrun" -s q -l quiet -d 'ddl prints only errors'
complete -c ddl -n "$persona_torchrun" -s h -l help -d 'This help'
complete -c ddl -n "$persona_mpirun" -o np -l np -s n -l n -s c -r -d 'Ranks (default: every slot)'
complete -c ddl -n "$persona_mpirun" -s H -l host -o host -r -d 'The hosts and their slots'
complete -c ddl -n "$persona_mpirun" -l hostfile -l machinefile -r -d 'Hosts, `host slots=N` lines'
complete -c ddl -n "$persona_mpirun" -s x -r -d 'Set NAME, or pass it from ddl\'s environment'
complete -c ddl -n "$persona_mpirun" -l mca -r -d 'VALUE                       Given to mpirun'
complete -c ddl -n "$persona_mpirun" -l gmca -r -d 'VALUE                      Given to mpirun'
complete -c ddl -n "$persona_mpirun" -l bind-to -r -d 'Given to mpirun'
complete -c ddl -n "$persona_mpirun" -l map-by -r -d 'Where ranks go: node deals them over the hosts'
complete -c ddl -n "$persona_mpirun" -l rank-by -r -d 'How ranks are numbered: node deals them over the hosts'
complete -c ddl -n "$persona_mpirun" -s N -l npernode -r -d 'Ranks on every host'
complete -c ddl -n "$persona_mpirun" -l oversubscribe -d 'More ranks than slots: the rest shared out over the hosts'
complete -c ddl -n "$persona_mpirun" -l wdir -o wd -r -d '[job] workdir: the ranks start there'
complete -c ddl -n "$persona_mpirun" -l tag-output -d 'Accepted; ddl tags every line with its rank'
complete -c ddl -n "$persona_mpirun" -l timestamp-output -d 'ddl --timestamps'
complete -c ddl -n "$persona_mpirun" -l output-filename -r -d 'ddl\'s DIR/rank-R.attempt-A.stdout.log and .stderr.log'
complete -c ddl -n "$persona_mpirun" -l allow-run-as-root -d 'Accepted; ddl adds it when root'
complete -c ddl -n "$persona_mpirun" -s q -l quiet -d 'ddl -q'
complete -c ddl -n "$persona_mpirun" -s v -l verbose -d 'ddl -v'
complete -c ddl -n "$persona_mpirun" -l timeout -r -d 'End the whole job after S seconds; exit 124'
complete -c ddl -n "$persona_mpirun" -l do-not-launch -d 'ddl --dry-run'
complete -c ddl -n "$persona_mpirun" -l prefix -r -d 'Given to mpirun (Open MPI\'s install prefix)'
complete -c ddl -n "$persona_mpirun" -l report-bindings -d 'Given to mpirun'
complete -c ddl -n "$persona_mpirun" -l display-map -d 'Given to mpirun'
complete -c ddl -n "$persona_mpirun" -s V -l version -d 'Refused: run mpirun --version'
complete -c ddl -n "$persona_mpirun" -l job -r -d 'ddl job file (TOML) whose settings apply under these options'
complete -c ddl -n "$persona_mpirun" -l name -r -d 'The job\'s name in ddl ps (default: ddl)'
complete -c ddl -n "$persona_mpirun" -s F -l ssh-config -r -d 'OpenSSH config to read ("none": none)'
complete -c ddl -n "$persona_mpirun" -l dry-run -d 'Print ddl\'s plan (hosts, ranks, env, command); launch nothing'
complete -c ddl -n "$persona_mpirun" -l stdin -x -a '0 all none' -d 'Which ranks read ddl\'s stdin (default: rank 0)'
complete -c ddl -n "$persona_mpirun" -l preflight -d 'Check the network among the hosts first; a slow host stops the job (exit 3)'
complete -c ddl -n "$persona_mpirun" -l no-preflight -d 'No check before the ranks start'
complete -c ddl -n "$persona_mpirun" -s h -l help -d 'This help'
complete -c ddl -n "$persona_horovodrun" -s v -l version -d 'Refused: ask Horovod (python3 -c \'import horovod\')'
complete -c ddl -n "$persona_horovodrun" -o np -l num-proc -r -d 'Ranks (default: every slot)'
complete -c ddl -n "$persona_horovodrun" -o cb -l check-build -d 'Refused: run horovodrun --check-build'
complete -c ddl -n "$persona_horovodrun" -l disable-cache -d 'Accepted; ddl caches no checks'
complete -c ddl -n "$persona_horovodrun" -l start-timeout -r -d '[rendezvous] timeout (default: HOROVOD_START_TIMEOUT)'
complete -c ddl -n "$persona_horovodrun" -l network-interfaces -r -d 'HOROVOD_GLOO_IFACE, GLOO_ and NCCL_SOCKET_IFNAME'
complete -c ddl -n "$persona_horovodrun" -l network-interface -r -d 'The same, one NIC (repeatable)'
complete -c ddl -n "$persona_horovodrun" -l output-filename -r -d 'ddl\'s DIR/rank-R.attempt-A.stdout.log and .stderr.log'
complete -c ddl -n "$persona_horovodrun" -l verbose -d 'ddl -v'
complete -c ddl -n "$persona_horovodrun" -l config-file -r -d 'Refused: write the options on the command line'
complete -c ddl -n "$persona_horovodrun" -s p -l ssh-port -r -d '[ssh] port'
complete -c ddl -n "$persona_horovodrun" -s i -l ssh-identity-file -r -d '[ssh] identity'
complete -c ddl -n "$persona_horovodrun" -l fusion-threshold-mb -r -d 'HOROVOD_FUSION_THRESHOLD (in bytes)'
complete -c ddl -n "$persona_horovodrun" -l cycle-time-ms -r -d 'HOROVOD_CYCLE_TIME'
complete -c ddl -n "$persona_horovodrun" -l cache-capacity -r -d 'HOROVOD_CACHE_CAPACITY'
complete -c ddl -n "$persona_horovodrun" -l hierarchical-allreduce -d 'HOROVOD_HIERARCHICAL_ALLREDUCE=1'
complete -c ddl -n "$persona_horovodrun" -l no-hierarchical-allreduce -d 'HOROVOD_HIERARCHICAL_ALLREDUCE=0'
complete -c ddl -n "$persona_horovodrun" -l hierarchical-allgather -d 'HOROVOD_HIERARCHICAL_ALLGATHER=1'
complete -c ddl -n "$persona_horovodrun" -l no-hierarchical-allgather -d 'HOROVOD_HIERARCHICAL_ALLGATHER=0'
complete -c ddl -n "$persona_horovodrun" -l torus-allreduce -d 'HOROVOD_TORUS_ALLREDUCE=1'
complete -c ddl -n "$persona_horovodrun" -l no-torus-allreduce -d 'HOROVOD_TORUS_ALLREDUCE=0'
complete -c ddl -n "$persona_horovodrun" -l autotune -d 'HOROVOD_AUTOTUNE=1 (and the --autotune-* variables)'
complete -c ddl -n "$persona_horovodrun" -l no-autotune -d 'No autotuning'
complete -c ddl -n "$persona_horovodrun" -l autotune-log-file -r -d 'HOROVOD_AUTOTUNE_LOG'
complete -c ddl -n "$persona_horovodrun" -l autotune-warmup-samples -r -d 'HOROVOD_AUTOTUNE_WARMUP_SAMPLES'
complete -c ddl -n "$persona_horovodrun" -l autotune-steps-per-sample -r -d 'HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE'
complete -c ddl -n "$persona_horovodrun" -l autotune-bayes-opt-max-samples -r -d 'HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES'
complete -c ddl -n "$persona_horovodrun" -l autotune-gaussian-process-noise -r -d 'HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE'
complete -c ddl -n "$persona_horovodrun" -l min-np -l min-num-proc -r -d 'ddl\'s elastic range: at least N ranks'
complete -c ddl -n "$persona_horovodrun" -l max-np -l max-num-proc -r -d 'ddl\'s elastic range: at most N ranks'
complete -c ddl -n "$persona_horovodrun" -l slots-per-host -r -d '[hosts] slots: for hosts given without a count'
complete -c ddl -n "$persona_horovodrun" -l elastic-timeout -r -d 'Accepted; ddl restarts on the hosts left at once'
complete -c ddl -n "$persona_horovodrun" -l reset-limit -r -d '--max-restarts N'
complete -c ddl -n "$persona_horovodrun" -l blacklist-cooldown-range -r -d 'MAX    Accepted; a lost host stays out of the job'
complete -c ddl -n "$persona_horovodrun" -l timeline-filename -r -d 'HOROVOD_TIMELINE'
complete -c ddl -n "$persona_horovodrun" -l timeline-mark-cycles -d 'HOROVOD_TIMELINE_MARK_CYCLES=1'
complete -c ddl -n "$persona_horovodrun" -l no-timeline-mark-cycles -d 'HOROVOD_TIMELINE_MARK_CYCLES=0'
complete -c ddl -n "$persona_horovodrun" -l no-stall-check -d 'HOROVOD_STALL_CHECK_DISABLE=1'
complete -c ddl -n "$persona_horovodrun" -l stall-check -d 'HOROVOD_STALL_CHECK_DISABLE=0'
complete -c ddl -n "$persona_horovodrun" -l stall-check-warning-time-seconds -r -d 'HOROVOD_STALL_CHECK_TIME_SECONDS'
complete -c ddl -n "$persona_horovodrun" -l stall-check-shutdown-time-seconds -r -d 'HOROVOD_STALL_SHUTDOWN_TIME_SECONDS'
complete -c ddl -n "$persona_horovodrun" -l mpi-threads-disable -d 'HOROVOD_MPI_THREADS_DISABLE=1'
complete -c ddl -n "$persona_horovodrun" -l no-mpi-threads-disable -d 'HOROVOD_MPI_THREADS_DISABLE=0'
complete -c ddl -n "$persona_horovodrun" -l mpi-args -r -d 'With --mpi: mpirun\'s options'
complete -c ddl -n "$persona_horovodrun" -l tcp -d 'NCCL_IB_DISABLE=1'
complete -c ddl -n "$persona_horovodrun" -l binding-args -r -d 'With --mpi: mpirun\'s binding options'
complete -c ddl -n "$persona_horovodrun" -l num-nccl-streams -r -d 'HOROVOD_NUM_NCCL_STREAMS'
complete -c ddl -n "$persona_horovodrun" -l thread-affinity -r -d 'HOROVOD_THREAD_AFFINITY'
complete -c ddl -n "$persona_horovodrun" -l gloo-timeout-seconds -r -d 'HOROVOD_GLOO_TIMEOUT_SECONDS'
complete -c ddl -n "$persona_horovodrun" -l log-level -r -d 'HOROVOD_LOG_LEVEL (TRACE DEBUG INFO WARNING ERROR FATAL)'
complete -c ddl -n "$persona_horovodrun" -l log-with-timestamp -d 'HOROVOD_LOG_HIDE_TIME=0'
complete -c ddl -n "$persona_horovodrun" -l log-without-timestamp -d 'HOROVOD_LOG_HIDE_TIME=1'
complete -c ddl -n "$persona_horovodrun" -l log-hide-timestamp -d 'HOROVOD_LOG_HIDE_TIME=1 (deprecated)'
complete -c ddl -n "$persona_horovodrun" -l no-log-hide-timestamp -d 'HOROVOD_LOG_HIDE_TIME=0 (deprecated)'
complete -c ddl -n "$persona_horovodrun" -o prefix-timestamp -l prefix-output-with-timestamp -d 'ddl --timestamps'
complete -c ddl -n "$persona_horovodrun" -s H -l hosts -r -d 'The hosts and their slots'
complete -c ddl -n "$persona_horovodrun" -o hostfile -l hostfile -r -d 'Hosts, `host slots=N` lines'
complete -c ddl -n "$persona_horovodrun" -l host-discovery-script -r -d '[hosts] discovery_script (elastic)'
complete -c ddl -n "$persona_horovodrun" -l gloo -d 'ddl starts the ranks, Horovod\'s Gloo rendezvous (the default)'
complete -c ddl -n "$persona_horovodrun" -l mpi -d 'The mpirun backend (Open MPI)'
complete -c ddl -n "$persona_horovodrun" -l jsrun -d 'Refused: LSF\'s jsrun is not a ddl backend'
complete -c ddl -n "$persona_horovodrun" -l backend -r -d 'ddl backend: auto, local, ssh, kubernetes, mpirun or slurm'
complete -c ddl -n "$persona_horovodrun" -l job -r -d 'ddl job file (TOML) whose settings apply under these options'
complete -c ddl -n "$persona_horovodrun" -l name -r -d 'The job\'s name in ddl ps (default: ddl)'
complete -c ddl -n "$persona_horovodrun" -s F -l ssh-config -r -d 'OpenSSH config to read ("none": none)'
complete -c ddl -n "$persona_horovodrun" -l timeout -r -d 'End the whole job after DUR (30s, 2h); exit 124'
complete -c ddl -n "$persona_horovodrun" -l dry-run -d 'Print ddl\'s plan (hosts, ranks, env, command); launch nothing'
complete -c ddl -n "$persona_horovodrun" -l stdin -x -a '0 all none' -d 'Which ranks read ddl\'s stdin (default: rank 0)'
complete -c ddl -n "$persona_horovodrun" -l preflight -d 'Check the network among the hosts first; a slow host stops the job (exit 3)'
complete -c ddl -n "$persona_horovodrun" -l no-preflight -d 'No check before the ranks start'
complete -c ddl -n "$persona_horovodrun" -s q -l quiet -d 'ddl prints only errors'
complete -c ddl -n "$persona_horovodrun" -s h -l help -d 'This help'
complete -c ddl -n "$persona_deepspeed" -s H -l hostfile -r -d 'Hosts, `host slots=N` lines (default /job/hostfile if there)'
complete -c ddl -n "$persona_deepspeed" -s i -l include -r -d 'Only these hosts and slot ids'
complete -c ddl -n "$persona_deepspeed" -s e -l exclude -r -d 'All but these hosts and slot ids'
complete -c ddl -n "$persona_deepspeed" -l num_nodes -r -d 'The first N hosts'
complete -c ddl -n "$persona_deepspeed" -l min_elastic_nodes -r -d 'Accepted without --elastic_training, which is refused'
complete -c ddl -n "$persona_deepspeed" -l max_elastic_nodes -r -d 'Accepted without --elastic_training, which is refused'
complete -c ddl -n "$persona_deepspeed" -l num_gpus -l num_accelerators -r -d 'Ranks on every host, GPU ids 0..N-1'
complete -c ddl -n "$persona_deepspeed" -l master_port -r -d '[torch] master_port (default: a free port)'
complete -c ddl -n "$persona_deepspeed" -l master_addr -r -d 'Must be this machine or the first host'
complete -c ddl -n "$persona_deepspeed" -l node_rank -r -d 'Only -1 or 0: ddl starts and numbers every node'
complete -c ddl -n "$persona_deepspeed" -l launcher -r -d 'pdsh: ddl\'s own (ssh); openmpi: mpirun; slurm: srun'
complete -c ddl -n "$persona_deepspeed" -l launcher_args -r -d 'openmpi: mpirun\'s options; slurm: srun\'s'
complete -c ddl -n "$persona_deepspeed" -l module -d 'Run the script as python -m MODULE'
complete -c ddl -n "$persona_deepspeed" -l no_python -d 'Run the script itself, not with python'
complete -c ddl -n "$persona_deepspeed" -l no_local_rank -d 'Do not pass --local_rank=N to the script'
complete -c ddl -n "$persona_deepspeed" -l no_ssh -d 'Refused: ddl starts every node itself'
complete -c ddl -n "$persona_deepspeed" -l no_ssh_check -d 'Accepted; ddl checks its connections itself'
complete -c ddl -n "$persona_deepspeed" -l force_multi -d 'Accepted; ddl reaches a remote host over ssh anyway'
complete -c ddl -n "$persona_deepspeed" -l save_pid -d 'Refused: ddl ps lists running jobs'
complete -c ddl -n "$persona_deepspeed" -l enable_each_rank_log -r -d 'ddl\'s DIR/rank-R.attempt-A.log per rank'
complete -c ddl -n "$persona_deepspeed" -l autotuning -r -d 'Refused: run DeepSpeed\'s autotuner with deepspeed'
complete -c ddl -n "$persona_deepspeed" -l elastic_training -d 'Refused: ddl torchrun --nnodes MIN:MAX is ddl\'s elastic range'
complete -c ddl -n "$persona_deepspeed" -l bind_cores_to_rank -d 'Refused: ddl binds no cores'
complete -c ddl -n "$persona_deepspeed" -l bind_core_list -r -d 'Refused: ddl binds no cores'
complete -c ddl -n "$persona_deepspeed" -l ssh_port -r -d '[ssh] port'
complete -c ddl -n "$persona_deepspeed" -l venv_script -r -d 'Refused: name the venv\'s interpreter with --python'
complete -c ddl -n "$persona_deepspeed" -l log_level -r -d 'debug: ddl -vv; error, critical: ddl -q'
complete -c ddl -n "$persona_deepspeed" -s q -l quiet -d 'ddl prints only errors'
complete -c ddl -n "$persona_deepspeed" -l hosts -r -d 'ddl\'s hosts instead of a hostfile, e.g. node[01-04]:8'
complete -c ddl -n "$persona_deepspeed" -l python -r -d 'Interpreter the script runs with (default: [job] python, else python3)'
complete -c ddl -n "$persona_deepspeed" -l job -r -d 'ddl job file (TOML) whose settings apply under these options'
complete -c ddl -n "$persona_deepspeed" -l name -r -d 'The job\'s name in ddl ps (default: ddl)'
complete -c ddl -n "$persona_deepspeed" -s F -l ssh-config -r -d 'OpenSSH config to read ("none": none)'
complete -c ddl -n "$persona_deepspeed" -l timeout -r -d 'End the whole job after DUR (30s, 2h); exit 124'
complete -c ddl -n "$persona_deepspeed" -l dry-run -d 'Print ddl\'s plan (hosts, ranks, env, command); launch nothing'
complete -c ddl -n "$persona_deepspeed" -l stdin -x -a '0 all none' -d 'Which ranks read ddl\'s stdin (default: rank 0)'
complete -c ddl -n "$persona_deepspeed" -l preflight -d 'Check the network among the hosts first; a slow host stops the job (exit 3)'
complete -c ddl -n "$persona_deepspeed" -l no-preflight -d 'No check before the ranks start'
complete -c ddl -n "$persona_deepspeed" -s v -l verbose -d 'ddl explains its choices (repeat for debug)'
complete -c ddl -n "$persona_deepspeed" -s h -l help -d 'This help'
