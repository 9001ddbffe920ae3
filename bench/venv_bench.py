#!/usr/bin/python3
"""Big-virtualenv benchmark: what shipping a 1 GB venv costs a job (stdlib only).

Builds a stand-in venv once (bin/python, a wrapper of /usr/bin/python3, and --size-mb of
incompressible files, zipped without compression), then, for each backend and task count N,
runs a job of N workers whose command checks that venv/bin/python runs, R times in each mode,
interleaved:

  none     no venv: the baseline;
  tony     --python_venv venv.zip: tony's way. Local: the zip is copied into the job directory and
           unpacked once per job, read-only, every task's ./venv linking to it. YARN: staged to
           HDFS, an APPLICATION archive that each NodeManager localizes once per application.
  pertask  TonY 0.5's way: the zip is a plain resource of every task (copied into each container
           locally; on YARN localized once per node as a file), and each task unzips it into its
           own ./venv before its command runs.

Reported, as median/min over the runs: the client's wall time (submit to exit) and what the venv
adds to it over `none`; and per task, that addition divided by N; with the ratio tony ÷ pertask.
Locally also the longest the AM's loop was held by one task, the most over the runs (the AM logs
it at exit): unpacking a venv must not hold it.
YARN runs need a running mini cluster (--cluster-dir DIR, from scripts/hadoop-minicluster start).
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = 'test -x venv/bin/python && venv/bin/python -c "import sys; sys.exit(0)"'


def build_venv(parent, size_mb):
    tree = os.path.join(parent, "venv-tree")
    os.makedirs(os.path.join(tree, "bin"))
    with open(os.path.join(tree, "bin", "python"), "w") as f:
        f.write('#!/bin/sh\nexec /usr/bin/python3 "$@"\n')
    os.chmod(os.path.join(tree, "bin", "python"), 0o755)
    chunk = 1 << 20  # 1 MiB files, like a venv's larger shared objects and many modules
    for i in range(size_mb):
        d = os.path.join(tree, "lib", "pkg%03d" % (i // 100))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "part%05d.so" % i), "wb") as f:
            f.write(os.urandom(chunk))
    zpath = os.path.join(parent, "venv.zip")
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_STORED) as z:
        for base, _, files in os.walk(tree):
            for name in files:
                full = os.path.join(base, name)
                info = zipfile.ZipInfo.from_file(full, os.path.relpath(full, tree))
                with open(full, "rb") as src, z.open(info, "w") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
    shutil.rmtree(tree)
    return zpath


def run(args, backend, mode, n, zpath):
    tmp = tempfile.mkdtemp(prefix="tony-venvbench-")
    env = dict(os.environ, TONY_HOME=os.path.join(tmp, "home"))
    cmd = [args.tony, "submit", "--conf", "tony.worker.instances=%d" % n,
           "--conf", "tony.worker.memory=256m", "--conf", "tony.am.memory=256m"]
    if backend == "yarn":
        env["HADOOP_CONF_DIR"] = args.cluster_dir
        cmd += ["--backend", "yarn"]
    command = "true" if mode == "none" else CHECK
    if mode == "tony":
        cmd += ["--python_venv", zpath]
    elif mode == "pertask":
        cmd += ["--conf", "tony.worker.resources=" + zpath]
        command = "unzip -q venv.zip -d venv && " + CHECK
    cmd += ["--conf", "tony.containers.command=" + command]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=args.timeout)
    total = time.monotonic() - t0
    stall = longest_loop_task_ms(os.path.join(tmp, "home")) if backend == "local" else None
    shutil.rmtree(tmp, ignore_errors=True)
    if proc.returncode != 0:
        sys.exit("%s %s N=%d failed:\n%s" % (backend, mode, n, proc.stdout.decode()[-3000:]))
    return total * 1000, stall


def longest_loop_task_ms(home):
    """The AM's "the loop's longest task took N ms" from its log below `home` (local jobs)."""
    for base, _, files in os.walk(home):
        for name in files:
            try:
                with open(os.path.join(base, name), errors="replace") as f:
                    for line in f:
                        m = re.search(r"the loop's longest task took (\d+) ms", line)
                        if m:
                            return int(m.group(1))
            except OSError:
                pass
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="venv size (default 1024)")
    ap.add_argument("--tasks", default="1,4", help="comma-separated task counts (default 1,4)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per mode (default 3)")
    ap.add_argument("--backends", default="local", help="local, yarn or local,yarn")
    ap.add_argument("--cluster-dir", help="a running mini cluster, for yarn")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--tony", default=os.path.join(ROOT, "build", "tony"))
    args = ap.parse_args()
    backends = args.backends.split(",")
    if "yarn" in backends and not args.cluster_dir:
        sys.exit("--backends yarn needs --cluster-dir of a running mini cluster")
    work = tempfile.mkdtemp(prefix="tony-venvbench-zip-")
    try:
        t0 = time.monotonic()
        zpath = build_venv(work, args.size_mb)
        print("venv.zip: %.0f MB, built in %.0f s; %d repeats" %
              (os.path.getsize(zpath) / 1e6, time.monotonic() - t0, args.repeats))
        print("%-6s %3s  %-8s %16s %16s %14s %14s" %
              ("", "N", "mode", "total ms", "venv adds ms", "per task ms", "AM loop max ms"))
        for backend in backends:
            for n in [int(x) for x in args.tasks.split(",")]:
                times = {m: [] for m in ("none", "tony", "pertask")}
                stalls = {m: [] for m in times}
                for _ in range(args.repeats):
                    for mode in times:
                        ms, stall = run(args, backend, mode, n, zpath)
                        times[mode].append(ms)
                        if stall is not None:
                            stalls[mode].append(stall)
                base = statistics.median(times["none"])
                added = {}
                for mode, values in times.items():
                    med = statistics.median(values)
                    added[mode] = med - base
                    extra = ("%16s %14s" % ("", "") if mode == "none" else
                             "%16.0f %14.0f" % (added[mode], added[mode] / n))
                    loop = "%14d" % max(stalls[mode]) if stalls[mode] else ""
                    print("%-6s %3d  %-8s %8.0f/%-7.0f%s %s" %
                          (backend, n, mode, med, min(values), extra, loop))
                if added["pertask"] > 0:
                    print("%-6s %3d  ratio tony/pertask (venv's cost): %.2f" %
                          (backend, n, added["tony"] / added["pertask"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
