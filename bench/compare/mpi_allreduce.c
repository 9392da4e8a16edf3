/* SPDX-License-Identifier: MIT */
/* MPI_Allreduce of floats, timed like ddl bench allreduce and all_reduce_perf:
 * per size one untimed op, a barrier, ITERS ops back to back, the time
 * averaged over ranks; verified once with small integers. Rank 0 prints
 * "size count time_us algbw busbw wrong" per size.
 * usage: mpi_allreduce ITERS WARMUP SIZE... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int iters = argc > 1 ? atoi(argv[1]) : 20;
  int warmup = argc > 2 ? atoi(argv[2]) : 5;
  for (int a = 3; a < argc; ++a) {
    long bytes = atol(argv[a]);
    long count = bytes / (long)sizeof(float);
    float* send = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    float* recv = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    for (long i = 0; i < count; ++i) send[i] = (float)((i + rank) % 7);
    for (int w = 0; w < warmup; ++w)
      MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i)
      MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double seconds = (MPI_Wtime() - start) / iters, total = 0;
    MPI_Allreduce(&seconds, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double avg = total / world;
    long wrong = 0, all_wrong = 0;
    for (long i = 0; i < count; ++i) {
      float expect = 0;
      for (int r = 0; r < world; ++r) expect += (float)((i + r) % 7);
      if (recv[i] != expect) ++wrong;
    }
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double algbw = avg > 0 ? (double)(count * 4) / avg / 1e9 : 0;
    if (rank == 0)
      printf("%ld %ld %.2f %.4f %.4f %ld\n", count * 4, count, avg * 1e6, algbw,
             algbw * 2.0 * (world - 1) / world, all_wrong);
    free(send);
    free(recv);
  }
  MPI_Finalize();
  return 0;
}
