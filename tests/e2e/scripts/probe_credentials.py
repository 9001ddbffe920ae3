#!/usr/bin/python3
"""Prints, as one line of JSON on stdout, what a task's user process can find of tony's
credentials: its environment, the credentials file YARN names in HADOOP_TOKEN_FILE_LOCATION
(hex), and every file under its working directory with its content (hex, the first 64 KiB).
"""
import json
import os

report = {"env": dict(os.environ), "tokens_hex": "", "files": {}}
tokens = os.environ.get("HADOOP_TOKEN_FILE_LOCATION")
if tokens and os.path.exists(tokens):
    with open(tokens, "rb") as f:
        report["tokens_hex"] = f.read().hex()
for root, dirs, files in os.walk("."):
    for name in files:
        path = os.path.join(root, name)
        try:
            with open(path, "rb") as f:
                report["files"][path] = f.read(65536).hex()
        except OSError as e:
            report["files"][path] = "unreadable: " + str(e)
print("probe " + json.dumps(report, sort_keys=True), flush=True)
