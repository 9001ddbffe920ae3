#!/usr/bin/python3
"""A two-rank PyTorch DDP job (gloo) of fixed work that checkpoints every step into
TONY_CHECKPOINT_DIR and resumes from it, for tony's gang restarts.

gang_ddp.py FAULT STEP: in its first attempt rank 1 meets FAULT at STEP: `kill` (SIGKILL, as from
outside), `stop` (SIGSTOP: hung) or `none`. Every rank prints a line each step, as training logs
do, and rank 0 also while it waits for a collective, so that only a stopped rank goes quiet (tony
finds a task that neither prints nor uses CPU hung). Each rank prints where it runs and from
which step it starts.
"""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

STEPS = 12


def wait(work, rank):
    while not work.is_completed():
        if rank == 0:
            print("rank 0 waits for the others", flush=True)
        time.sleep(0.2)
    work.wait()


def main():
    fault, at = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    dist.init_process_group(backend="gloo", init_method="env://")
    rank = dist.get_rank()
    attempt = int(os.environ["ATTEMPT_NUMBER"])
    checkpoint = os.path.join(os.environ["TONY_CHECKPOINT_DIR"], "gang_ddp.pt")
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 1))
    start = 0
    if os.path.exists(checkpoint):
        state = torch.load(checkpoint)
        model.module.load_state_dict(state["model"])
        start = state["step"]
    print(f"rank {rank} attempt {attempt} restart {os.environ['TORCHELASTIC_RESTART_COUNT']} "
          f"in {os.path.basename(os.getcwd())} starts at step {start}", flush=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(start, STEPS):
        opt.zero_grad()
        model(torch.ones(8, 4)).sum().backward()  # DDP's own all-reduce: no printing while it waits
        opt.step()
        # The fault comes after DDP's all-reduce, so that rank 0 then waits in one that prints.
        if rank == 1 and attempt == 0 and step == at:
            if fault == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif fault == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
        done = torch.tensor([step + 1.0])
        wait(dist.all_reduce(done, async_op=True), rank)
        if rank == 0:
            partial = checkpoint + ".partial"
            torch.save({"step": step + 1, "model": model.module.state_dict()}, partial)
            os.replace(partial, checkpoint)
        print(f"rank {rank} step {step + 1}/{STEPS}", flush=True)
        wait(dist.barrier(async_op=True), rank)
        time.sleep(0.1)
    print(f"rank {rank} finished {STEPS} steps", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
