#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch.distributed gloo allreduce of float32, timed like ddl bench allreduce:
per size one untimed op, a barrier, ITERS ops back to back, the time averaged
over ranks. Rank 0 prints "size count time_us algbw busbw wrong" per size.
usage: RANK=r WORLD_SIZE=n MASTER_ADDR=a MASTER_PORT=p gloo_allreduce.py ITERS WARMUP SIZE..."""
import os, sys, time
import torch
import torch.distributed as dist

def main():
    iters, warmup = int(sys.argv[1]), int(sys.argv[2])
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    for size in map(int, sys.argv[3:]):
        count = size // 4
        base = (torch.arange(count, dtype=torch.int64) + rank) % 7
        data = base.to(torch.float32)
        for _ in range(warmup):
            dist.all_reduce(data.clone())
        work = data.clone()
        dist.all_reduce(work)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(work)
        seconds = (time.perf_counter() - start) / iters
        total = torch.tensor([seconds], dtype=torch.float64)
        dist.all_reduce(total)
        avg = total.item() / world
        check = data.clone()
        dist.all_reduce(check)
        expect = sum(((torch.arange(count, dtype=torch.int64) + r) % 7) for r in range(world))
        wrong = torch.tensor([int((check != expect.to(torch.float32)).sum())], dtype=torch.int64)
        dist.all_reduce(wrong)
        algbw = count * 4 / avg / 1e9 if avg > 0 else 0.0
        if rank == 0:
            print("%d %d %.2f %.4f %.4f %d" % (count * 4, count, avg * 1e6, algbw,
                                               algbw * 2 * (world - 1) / world, int(wrong.item())),
                  flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
