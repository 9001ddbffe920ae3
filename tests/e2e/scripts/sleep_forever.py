#!/usr/bin/python3
"""Prints "started <JOB_NAME>:<TASK_INDEX> pid <pid>" and sleeps until killed."""
import os
import signal
import time

# Die on SIGINT too, even if it was ignored when we were started (as in a background job).
signal.signal(signal.SIGINT, signal.SIG_DFL)
print(f"started {os.environ.get('JOB_NAME', '')}:{os.environ.get('TASK_INDEX', '')} "
      f"pid {os.getpid()}", flush=True)
while True:
    time.sleep(3600)
