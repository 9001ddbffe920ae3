#!/usr/bin/python3
"""The job bench/goodput.py runs: fixed work for two PyTorch DDP ranks (gloo). Each of --steps
steps is --step-s seconds of stand-in compute (a sleep, so that the two cores of a small machine
do not decide the result) and one all-reduce. Rank 0 keeps a checkpoint in TONY_CHECKPOINT_DIR
every --checkpoint-every steps; every rank resumes from it.

--fault kill|stop makes rank 1 kill (SIGKILL) or stop (SIGSTOP) itself at step --fault-at, once:
a marker in the checkpoint directory says it happened, so that a resubmitted job does not do it
again. Every rank prints a line each step, as training logs do, and rank 0 also while it waits
for a collective, so that only the stopped rank goes quiet.
Lines for the bench: "goodput: fault at <unix s>" and "goodput: rank R starts at step S at <unix s>".
"""
import argparse
import os
import signal
import sys
import time

import torch
import torch.distributed as dist


def wait(work, rank):
    while not work.is_completed():
        if rank == 0:
            print("rank 0 waits for the others", flush=True)
        time.sleep(0.2)
    work.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--step-s", type=float, required=True)
    ap.add_argument("--checkpoint-every", type=int, required=True)
    ap.add_argument("--fault", choices=["none", "kill", "stop"], default="none")
    ap.add_argument("--fault-at", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group(backend="gloo", init_method="env://")
    rank = dist.get_rank()
    directory = os.environ["TONY_CHECKPOINT_DIR"]
    checkpoint = os.path.join(directory, "goodput.pt")
    marker = os.path.join(directory, "fault-done")
    weights = torch.zeros(4)
    start = 0
    if os.path.exists(checkpoint):
        state = torch.load(checkpoint)
        weights, start = state["weights"], state["step"]
    print(f"goodput: rank {rank} starts at step {start} at {time.time():.3f}", flush=True)
    for step in range(start, args.steps):
        if (rank == 1 and args.fault != "none" and step == args.fault_at
                and not os.path.exists(marker)):
            open(marker, "w").close()
            print(f"goodput: fault at {time.time():.3f}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL if args.fault == "kill" else signal.SIGSTOP)
        time.sleep(args.step_s)
        grad = torch.ones(4) * (rank + 1)
        wait(dist.all_reduce(grad, async_op=True), rank)
        weights += grad
        if rank == 0 and (step + 1) % args.checkpoint_every == 0:
            partial = checkpoint + ".partial"
            torch.save({"step": step + 1, "weights": weights}, partial)
            os.replace(partial, checkpoint)
        print(f"rank {rank} step {step + 1}", flush=True)
    wait(dist.barrier(async_op=True), rank)
    # Every step counted once, however often the job restarted: 3 per step for two ranks.
    print(f"goodput: rank {rank} done, weights {weights[0].item():.0f} of "
          f"{3 * args.steps}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
