#!/usr/bin/python3
"""What tony's own processes hold of a task's container memory (stdlib only).

Runs a local job of N worker tasks (default: 4 tasks of `sleep 4`) and, from the
moment the AM starts its first container until the job ends, samples every few
milliseconds the resident memory of each container's processes, as YARN's
NodeManager measures a container by default: the sum of the RSS field of
/proc/<pid>/stat over the container's process tree
(yarn.nodemanager.container-monitor.procfs-tree.smaps-based-rss.enabled is off).
A container here is a child of the AM and everything below it: at first
`tony executor`, which forks the executor and becomes its guard; the executor;
the sandbox's init; the task's command.

For each of tony's roles it reports the largest VmHWM (the kernel's own high
water mark, so a peak between two samples still counts) and the median RSS
while the task runs (the samples from 1.5 s after the container started).
For each container it reports the largest sampled sum of tony's processes
(the task's command left out) and of everything, and the same while the task
runs. The sums are samples: a peak shorter than the sampling interval can
be missed; the VmHWM column cannot miss one.

  bench/task_footprint.py [--tasks 4] [--command 'sleep 4'] [--tony build/tony]
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TONY = os.path.join(os.path.dirname(HERE), "build", "tony")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
STEADY_AFTER_S = 1.5


def read_stat(pid):
    """(parent pid, RSS kB) from /proc/<pid>/stat, or None if gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    # fields[0] is the state (stat's field 3): the parent is field 4, the RSS field 24.
    return int(fields[1]), int(fields[21]) * PAGE_KB


def read_hwm(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def role_of(pid):
    """guard, executor, sandbox-init, or task (the user's command and what it started)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if len(argv) >= 2 and argv[0].endswith(b"tony"):
        if argv[1] in (b"guard", b"executor", b"sandbox-init"):
            return argv[1].decode()
    return "task"


def snapshot():
    """{pid: (parent, rss kB)} of every process."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = read_stat(int(name))
            if stat is not None:
                table[int(name)] = stat
    return table


def tree(root, children):
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--command", default="sleep 4")
    parser.add_argument("--tony", default=DEFAULT_TONY)
    parser.add_argument("--memory", default="64m", help="tony.worker.memory")
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="tony-footprint-")
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    cmd = [args.tony, "submit", "--conf", "tony.containers.command=" + args.command,
           "--conf", "tony.worker.instances=%d" % args.tasks,
           "--conf", "tony.worker.memory=" + args.memory]
    out = open(os.path.join(tmp, "submit.out"), "wb")
    popen = subprocess.Popen(cmd, env=dict(os.environ, TONY_HOME=home), stdout=out,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + args.timeout
    am_pid = None
    first_seen = {}       # container root -> monotonic time it was first seen
    hwm = {}              # (role, pid) -> largest VmHWM
    steady = {}           # role -> [RSS kB] of the samples while the task runs
    sums = {}             # container root -> [(time, tony's kB, all kB)]
    samples = 0
    peak_sample = [0, 0, ""]  # tony's kB, when, what
    started = time.monotonic()
    try:
        while popen.poll() is None and time.monotonic() < deadline:
            if am_pid is None:
                files = glob.glob(os.path.join(home, "jobs", "*", "am.pid"))
                try:
                    am_pid = int(open(files[0]).read().split()[0]) if files else None
                except (OSError, ValueError, IndexError):
                    am_pid = None
                if am_pid is None:
                    time.sleep(0.005)
                    continue
            table = snapshot()
            now = time.monotonic()
            samples += 1
            children = {}
            for pid, (parent, _) in table.items():
                children.setdefault(parent, []).append(pid)
            for root in children.get(am_pid, ()):
                first_seen.setdefault(root, now)
                running = now - first_seen[root] >= STEADY_AFTER_S
                tony_kb = all_kb = 0
                parts = []
                for pid in tree(root, children):
                    role = role_of(pid)
                    if role is None or pid not in table:
                        continue
                    rss = table[pid][1]
                    all_kb += rss
                    parts.append("%s %d" % (role, rss))
                    if role == "task":
                        continue
                    tony_kb += rss
                    peak = read_hwm(pid)
                    if peak is not None:
                        hwm[(role, pid)] = max(hwm.get((role, pid), 0), peak)
                    if running:
                        steady.setdefault(role, []).append(rss)
                sums.setdefault(root, []).append((now - first_seen[root], tony_kb, all_kb))
                if tony_kb > peak_sample[0]:
                    peak_sample[:] = [tony_kb, now - first_seen[root], ", ".join(parts)]
        sampled_s = time.monotonic() - started
        rc = popen.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if popen.poll() is None:
            popen.kill()
            rc = None
        out.close()
    if rc != 0:
        sys.stdout.write(open(os.path.join(tmp, "submit.out"), errors="replace").read())
        print("the job failed (exit %s)" % rc)
        shutil.rmtree(tmp, ignore_errors=True)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)

    def mb(kb):
        return "%.1f" % (kb / 1024.0) if kb else "-"

    print("%d tasks of `%s`, %d samples of every container (one every %.1f ms)" % (
        args.tasks, args.command, samples, 1000.0 * sampled_s / max(1, samples)))
    print("%-13s  %-14s  %-22s" % ("role", "peak MB (HWM)", "while the task runs MB"))
    for role in ("guard", "executor", "sandbox-init"):
        peaks = [v for (r, _), v in hwm.items() if r == role]
        print("%-13s  %-14s  %-22s" % (role, mb(max(peaks, default=0)),
                                       mb(statistics.median(steady[role]))
                                       if steady.get(role) else "-"))
    tony_peak = max((t for s in sums.values() for _, t, _ in s), default=0)
    all_peak = max((a for s in sums.values() for _, _, a in s), default=0)
    tony_run = [t for s in sums.values() for at, t, _ in s if at >= STEADY_AFTER_S]
    all_run = [a for s in sums.values() for at, _, a in s if at >= STEADY_AFTER_S]
    print("container, sampled sum of RSS: tony's processes peak %s MB, %s MB while the task runs "
          "(median); with the task's command: peak %s MB, %s MB while it runs" % (
              mb(tony_peak), mb(statistics.median(tony_run)) if tony_run else "-",
              mb(all_peak), mb(statistics.median(all_run)) if all_run else "-"))
    print("the largest sum of tony's processes, %.2f s after its container started: %s (kB)" % (
        peak_sample[1], peak_sample[2]))
    executor_peaks = [v for (r, _), v in hwm.items() if r == "executor"]
    guard_peaks = [v for (r, _), v in hwm.items() if r == "guard"]
    if executor_peaks and guard_peaks:
        print("executor + guard, peak: %s MB (the largest VmHWM of each; target 12 MB)" % mb(
            max(executor_peaks) + max(guard_peaks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
