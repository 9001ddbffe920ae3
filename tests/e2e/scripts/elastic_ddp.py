#!/usr/bin/python3
"""A PyTorch DDP job (gloo) for torchrun's elastic agent, which starts it again at each rendezvous
with the workers that are there; it resumes from TONY_CHECKPOINT_DIR each time.

Every step it records the world size it ran with, in the checkpoint, and prints
`task T rank R world W step S`. In its first attempt, task 1 takes its whole task down (its
torchrun agent and itself, SIGKILL: as a lost machine) after KILL_AT steps. The job is done once
it ran at least 3 steps with a world of 1 (the survivor alone) and then 3 with a world of 2 (the
replacement back): a group that never shrank or never grew back runs on until MAX_STEPS and
prints that it gave up, so that the test sees which.
"""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

KILL_AT = 3
MAX_STEPS = 400


def done(worlds):
    """3 steps with a world of 1, and the last 3 with a world of 2 after them."""
    if len(worlds) < 6 or worlds[-3:] != [2, 2, 2]:
        return False
    alone = [i for i, w in enumerate(worlds) if w == 1]
    return len(alone) >= 3 and alone[-1] < len(worlds) - 3


def main():
    torch.set_num_threads(1)
    dist.init_process_group(backend="gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    task = int(os.environ["TASK_INDEX"])
    attempt = int(os.environ["ATTEMPT_NUMBER"])
    checkpoint = os.path.join(os.environ["TONY_CHECKPOINT_DIR"], "elastic_ddp.pt")
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 1))
    worlds = []
    if os.path.exists(checkpoint):
        state = torch.load(checkpoint)
        model.module.load_state_dict(state["model"])
        worlds = state["worlds"]
    print(f"task {task} attempt {attempt} rank {rank} world {world} restart "
          f"{os.environ['TORCHELASTIC_RESTART_COUNT']} starts at step {len(worlds)}", flush=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    while len(worlds) < MAX_STEPS:
        opt.zero_grad()
        model(torch.ones(8, 4)).sum().backward()
        opt.step()
        worlds.append(world)
        if task == 1 and attempt == 0 and len(worlds) == KILL_AT:
            os.kill(os.getppid(), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)
        # Every rank learns whether rank 0 finds the job done.
        flag = torch.tensor([1.0 if rank == 0 and done(worlds) else 0.0])
        dist.all_reduce(flag)
        if rank == 0:
            partial = checkpoint + ".partial"
            torch.save({"worlds": worlds, "model": model.module.state_dict()}, partial)
            os.replace(partial, checkpoint)
        print(f"task {task} rank {rank} world {world} step {len(worlds)}", flush=True)
        if flag.item() > 0:
            print(f"task {task} rank {rank} done: worlds {worlds}", flush=True)
            break
        time.sleep(0.3)
    else:
        print(f"task {task} rank {rank} gave up after {MAX_STEPS} steps: worlds {worlds}",
              flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
