#!/usr/bin/python3
"""AM scale benchmark: one real AM, N simulated executors over its real (TLS) control plane.

Runs build/bench/am_scale (bench/am_scale.cc) for each N in --tasks and prints its summary line;
the last line is a JSON list of the runs' JSON objects (tasks, register_ms, spec_release_ms,
spec_bytes, unpack_us, heartbeat_ms, heartbeats_per_s, am_cpu_pct, am_peak_rss_mb, report_ms, failed_calls,
am_exit). Builds nothing.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="64,512,4096", help="comma-separated N (default 64,512,4096)")
    ap.add_argument("--heartbeat-seconds", type=int, default=10,
                    help="how long every executor heartbeats, at least (default 10)")
    ap.add_argument("--heartbeat-ms", type=int, default=0,
                    help="the executors' heartbeat interval (default: the job's pace, which "
                         "tony.task.heartbeat-interval-ms=1000 gives a job of N tasks)")
    ap.add_argument("--connections", type=int, default=256,
                    help="TLS connections the executors share (default 256)")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bench", "am_scale"))
    args = ap.parse_args()
    runs = []
    for n in [int(x) for x in args.tasks.split(",")]:
        proc = subprocess.run([args.binary, "--tasks", str(n), "--heartbeat-seconds",
                               str(args.heartbeat_seconds), "--heartbeat-ms", str(args.heartbeat_ms),
                               "--connections", str(args.connections)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              timeout=1800)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            sys.exit("am_scale --tasks %d failed (exit %d):\n%s" % (n, proc.returncode, proc.stdout))
        print(lines[-2])
        runs.append(json.loads(lines[-1]))
    print(json.dumps(runs))


if __name__ == "__main__":
    main()
