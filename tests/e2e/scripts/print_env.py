#!/usr/bin/python3
"""Prints the task environment as one line of JSON on stdout.

print_env.py [FILE]: also writes the JSON to FILE; "{job}" and "{index}" in FILE are replaced
by JOB_NAME and TASK_INDEX.
"""
import json
import os
import sys

text = json.dumps(dict(os.environ), sort_keys=True)
print(text, flush=True)
if len(sys.argv) > 1:
    path = sys.argv[1].replace("{job}", os.environ.get("JOB_NAME", "")).replace(
        "{index}", os.environ.get("TASK_INDEX", ""))
    with open(path + ".tmp", "w") as f:
        f.write(text + "\n")
    os.replace(path + ".tmp", path)
