#!/usr/bin/env bash
# sbatch of a script that calls `ddl run`: inside the batch job ddl uses the
# allocation and backend slurm (auto); each rank reports its host; the job's
# exit code is the failing rank's (rank 3 fails once every rank has reported,
# else the gang may end a rank not yet started). (sbatch --wait polls every 10 s.)
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
slurm_up 4

cat >"$t/job.sh" <<EOF2
#!/bin/sh
"$DDL" run -- sh -c 'echo "rank=\$DDL_RANK host=\$(hostname)" >"$t/out.\$DDL_RANK"; [ "\$DDL_RANK" != 3 ] || { for i in \$(seq 200); do [ \$(ls "$t"/out.* | wc -l) -ge 4 ] && break; sleep 0.1; done; exit 7; }'
EOF2
chmod +x "$t/job.sh"
DDL_TIMEOUT=55 expect_exit 7 slurm_login sbatch --wait -Q -N4 --ntasks-per-node=1 -o "$t/slurm.out" "$t/job.sh"
for r in 0 1 2 3; do
  [[ $(cat "$t/out.$r") == "rank=$r host=h$((r + 1))" ]] || fail "rank $r: $(cat "$t/out.$r" 2>&1)"
done
expect_contains "$t/slurm.out" "rank 3"
