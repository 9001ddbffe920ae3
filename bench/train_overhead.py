#!/usr/bin/python3
"""Training overhead: the same PyTorch DDP job under tony and under a bare torchrun (stdlib only).

The job (bench/train_overhead_job.py) is real CPU work: two DDP ranks over gloo, one thread each,
STEPS optimizer steps of an MLP, the first WARMUP untimed. Rank 0 reports its steps per second
between two barriers, so start-up and shutdown (where tony and torchrun differ by design) are
left out, and what remains is what either costs a running job: tony's executor heartbeating with
the process tree's memory and CPU, the task sandbox, the output capture; torchrun's agent
monitoring its workers.

  bare   python3 -m torch.distributed.run --standalone --nproc_per_node=2 --redirects 1 --tee 1
         job STEPS WARMUP
  tony   tony submit (local backend, framework pytorch, two workers) of the same command

Each round runs both, in alternating order; the table has each round's steps/s and ratio (tony /
bare), and the median ratio.

  bench/train_overhead.py [--rounds 5] [--steps 600] [--warmup 60]
"""

import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(ROOT, "bench", "train_overhead_job.py")
PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch
# torchrun prefixes the line with the rank ("[default0]:").
RESULT = re.compile(rb"train-overhead steps_per_s=([0-9.]+)$", re.M)


def bare(args):
    """steps/s under torchrun, one node, two processes."""
    # Debian's torch 1.13 under Python 3.11 fails at start without --redirects/--tee (its
    # default of no redirection is read as None); rank 0 prints one line, so they cost nothing.
    run = subprocess.run([PYTHON, "-m", "torch.distributed.run", "--standalone",
                          "--nproc_per_node=2", "--redirects", "1", "--tee", "1", JOB,
                          str(args.steps), str(args.warmup)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=args.timeout)
    found = RESULT.search(run.stdout)
    if run.returncode != 0 or not found:
        sys.exit("torchrun failed (%d):\n%s" % (run.returncode, run.stdout.decode(errors="replace")))
    return float(found.group(1))


def tony(args):
    """steps/s under tony on the local backend, two workers."""
    tmp = tempfile.mkdtemp(prefix="tony-train-overhead-")
    try:
        env = dict(os.environ, TONY_HOME=os.path.join(tmp, "home"))
        cmd = [args.tony, "submit",
               "--conf", "tony.application.framework=pytorch",
               "--conf", "tony.worker.instances=2",
               "--conf", "tony.worker.memory=2g",
               "--conf", "tony.containers.command=%s %s %d %d" % (PYTHON, JOB, args.steps,
                                                                  args.warmup)]
        run = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=args.timeout)
        if run.returncode != 0:
            sys.exit("tony failed (%d):\n%s" % (run.returncode, run.stdout.decode(errors="replace")))
        for stdout in glob.glob(os.path.join(tmp, "home", "jobs", "*", "logs", "*", "stdout")):
            with open(stdout, "rb") as f:
                found = RESULT.search(f.read())
            if found:
                return float(found.group(1))
        sys.exit("tony: no task printed its steps/s:\n" + run.stdout.decode(errors="replace"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tony", default=os.path.join(ROOT, "build", "tony"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    if not 0 < args.warmup < args.steps or args.rounds < 1:
        parser.error("--warmup must be above 0 and below --steps, and --rounds at least 1")
    print("round  first  bare steps/s  tony steps/s  tony/bare")
    ratios = []
    for i in range(args.rounds):
        if i % 2 == 0:
            b, t = bare(args), tony(args)
        else:
            t, b = tony(args), bare(args)
        ratios.append(t / b)
        print("%5d  %5s  %12.2f  %12.2f  %9.3f" % (i + 1, "bare" if i % 2 == 0 else "tony", b, t,
                                                    t / b), flush=True)
    print("median tony/bare %.3f (min %.3f, max %.3f) over %d rounds" %
          (statistics.median(ratios), min(ratios), max(ratios), len(ratios)))


if __name__ == "__main__":
    main()
