#!/usr/bin/python3
"""A PyTorch DDP job (gloo) for torchrun's elastic agent, which starts it again at each rendezvous
with the workers that are there; it resumes from TONY_CHECKPOINT_DIR each time.

`elastic_ddp.py --await-alone`, run before torchrun, returns at once in a task's first attempt;
in a replacement's it returns once the checkpoint shows 3 steps run by the survivor alone (at
most 240 s), so that the replacement joins only a group that shrank, whatever the timing.

Every step it records the world size it ran with, in the checkpoint, and prints
`task T rank R world W step S`. In its first attempt, task 1 takes its whole task down (its
torchrun agent and itself, SIGKILL: as a lost machine) after KILL_AT steps. The job is done once
it ran at least 3 steps with a world of 1 (the survivor alone) and then 3 with a world of 2 (the
replacement back): a group that never shrank or never grew back runs on until MAX_STEPS and
prints that it gave up, so that the test sees which.
"""
import json
import os
import signal
import sys
import time

KILL_AT = 3
MAX_STEPS = 400


def worlds_path():
    return os.path.join(os.environ["TONY_CHECKPOINT_DIR"], "elastic_ddp.worlds.json")


def await_alone():
    if int(os.environ["ATTEMPT_NUMBER"]) == 0:
        return 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        try:
            with open(worlds_path()) as f:
                if json.load(f).count(1) >= 3:
                    return 0
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    print("the survivor never ran alone", flush=True)
    return 0


if len(sys.argv) > 1 and sys.argv[1] == "--await-alone":
    sys.exit(await_alone())

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402

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
            with open(worlds_path() + ".partial", "w") as f:
                json.dump(worlds, f)
            os.replace(worlds_path() + ".partial", worlds_path())
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
