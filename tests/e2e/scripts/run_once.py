#!/usr/bin/python3
"""Appends this process's pid and a random id to DIR/<JOB_NAME>-<TASK_INDEX>.pids (DIR: argv[1]), then waits for
DIR/go (at most 300 s) and exits 0: a task that ran more than once leaves more than one line."""
import os
import sys
import time
import uuid

directory = sys.argv[1]
name = f"{os.environ['JOB_NAME']}-{os.environ['TASK_INDEX']}"
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
