#!/usr/bin/python3
"""The first run leaves MARKER (argv[1]) behind and sleeps until killed; a run that finds MARKER
prints "found the first run's marker" and exits 0."""
import os
import sys
import time

marker = sys.argv[1]
if os.path.exists(marker):
    print("found the first run's marker", flush=True)
    sys.exit(0)
with open(marker + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(marker + ".tmp", marker)
print(f"first run, pid {os.getpid()}", flush=True)
while True:
    time.sleep(3600)
