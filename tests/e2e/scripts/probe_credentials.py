#!/usr/bin/python3
"""Prints, as one line of JSON on stdout, what a task's user process can find of tony's
credentials: its environment, the credentials file YARN names in HADOOP_TOKEN_FILE_LOCATION
(hex), and the content (hex, the first 64 KiB) of every file it can read under its working
directory and wherever tony keeps anything: the job directory and every other job's
($TONY_JOB_DIR/.., $TONY_HOME), the NodeManager's directories of this and other applications
(LOCAL_DIRS' parents) and its nmPrivate/, and the other processes' environments and roots.
With an argument (the tony binary, local backend), it also tries `tony kill` on its own job.
"""
import json
import os
import subprocess
import sys

report = {"env": dict(os.environ), "tokens_hex": "", "files": {}, "pids": [], "kill": None}
tokens = os.environ.get("HADOOP_TOKEN_FILE_LOCATION")
if tokens and os.path.exists(tokens):
    with open(tokens, "rb") as f:
        report["tokens_hex"] = f.read().hex()


def read(path):
    if path in report["files"] or not os.path.isfile(path):
        return
    try:
        with open(path, "rb") as f:
            report["files"][path] = f.read(65536).hex()
    except OSError as e:
        report["files"][path] = "unreadable: " + str(e)


def walk(top, limit=5000):
    for root, dirs, files in os.walk(top):
        for name in files:
            if len(report["files"]) >= limit:
                return
            read(os.path.join(root, name))


roots = ["."]
job_dir = os.environ.get("TONY_JOB_DIR")
if job_dir:
    roots += [job_dir, os.path.dirname(job_dir.rstrip("/"))]
home = os.environ.get("TONY_HOME") or os.path.expanduser("~/.tony")
roots.append(home)
for local_dir in filter(None, os.environ.get("LOCAL_DIRS", "").split(",")):
    appcache = os.path.dirname(local_dir.rstrip("/"))
    nm_root = os.path.dirname(os.path.dirname(os.path.dirname(appcache)))
    roots += [appcache, os.path.join(nm_root, "nmPrivate")]
for top in roots:
    walk(top)

for entry in os.listdir("/proc"):
    if not entry.isdigit():
        continue
    report["pids"].append(int(entry))
    read("/proc/%s/environ" % entry)
    if job_dir:
        read("/proc/%s/root%s/secret" % (entry, job_dir))

if len(sys.argv) > 1 and os.environ.get("JOB_ID"):
    kill = subprocess.run([sys.argv[1], "kill", os.environ["JOB_ID"]], capture_output=True,
                          text=True, timeout=60)
    report["kill"] = {"code": kill.returncode, "out": kill.stdout + kill.stderr}
print("probe " + json.dumps(report, sort_keys=True), flush=True)
