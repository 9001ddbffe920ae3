#!/usr/bin/python3
"""One rank of the training job of bench/train_overhead.py: PyTorch DDP over gloo on the CPU.

A fixed amount of real work: an MLP (512-1024-1024-10) on one batch of 64 random samples, one
thread per rank, STEPS optimizer steps of which the first WARMUP are not timed. Started the same
way under torchrun and under tony (both set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT).
Rank 0 prints one line, "train-overhead steps_per_s=<n>", the timed steps over the time between
two barriers.

  train_overhead_job.py STEPS WARMUP
"""

import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def main():
    steps, warmup = int(sys.argv[1]), int(sys.argv[2])
    if not 0 < warmup < steps:
        sys.exit("train_overhead_job.py: WARMUP must be above 0 and below STEPS")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 512)
    y = torch.randint(0, 10, (64,))
    start = None
    for step in range(steps):
        if step == warmup:
            dist.barrier()
            start = time.monotonic()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    dist.barrier()
    elapsed = time.monotonic() - start
    if dist.get_rank() == 0:
        print(f"train-overhead steps_per_s={(steps - warmup) / elapsed:.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
