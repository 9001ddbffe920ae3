#!/usr/bin/python3
"""Appends this process's pid and a random id to DIR/<JOB_NAME>-<TASK_INDEX>.pids (DIR: argv[1]), then waits for
DIR/go (at most 300 s) and exits 0: a task that ran more than once leaves more than one line. A SIGTERM is
recorded the same way in DIR/<JOB_NAME>-<TASK_INDEX>.terms half a second later (where a real task would
checkpoint), and ends it with 143."""
import os
import signal
import sys
import time
import uuid

directory = sys.argv[1]
name = f"{os.environ['JOB_NAME']}-{os.environ['TASK_INDEX']}"


def on_term(signum, frame):
    time.sleep(0.5)  # as a checkpoint would take
    with open(os.path.join(directory, name + ".terms"), "a") as f:
        f.write(f"{os.getpid()}\n")
    print(f"{name} stops on SIGTERM", flush=True)
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, on_term)
with open(os.path.join(directory, name + ".pids"), "a") as f:
    f.write(f"{os.getpid()} {uuid.uuid4()}\n")
print(f"{name} runs as pid {os.getpid()}", flush=True)
deadline = time.monotonic() + 300
while not os.path.exists(os.path.join(directory, "go")):
    if time.monotonic() > deadline:
        print("no go file within 300 s", file=sys.stderr, flush=True)
        sys.exit(3)
    time.sleep(0.1)
print(f"{name} done", flush=True)
