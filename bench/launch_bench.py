#!/usr/bin/python3
"""Launch-latency and memory benchmark: tony vs. torchrun (stdlib only).

For each task count N it runs, R times each (interleaved):

  tony      `tony submit` with N worker tasks (local backend, GANG mode);
  torchrun  PyTorch's launcher (`python3 -m torch.distributed.run --standalone
            --no_python`) starting the same N processes;
  direct    a floor: this script spawning the N processes itself with
            subprocess.Popen (no launcher at all).

Every task runs the same tiny shell command

    date +%s%N > "$STAMP_DIR/worker.<index>"; sleep <sleep>; date +%s%N > "$STAMP_DIR/end.<index>"

so the launch latency of a run is  max(stamp) - t0, where t0 is
CLOCK_REALTIME taken just before the launcher is spawned. The stamp includes
the start of one /bin/sh and of `date` itself (about 1 ms each on an idle
machine, more on a loaded one); the `direct` column shows that floor.

The job's end is the launcher's exit (CLOCK_REALTIME, taken by a thread blocked in
waitpid) minus the last task's end stamp: how long after its tasks ended the
launcher tells its user so.

While the tasks sleep, the script samples /proc/<pid>/status (VmHWM, VmRSS,
RssAnon, RssFile) of tony's AM (am.pid), of one `tony executor` of the job, of
that executor's guard and of the torchrun launcher, and /proc/<pid>/smaps_rollup
for PSS.  Sampling only starts once every stamp exists, so it does not compete
with the launch for CPU; VmHWM is a high-water mark, so the peak during the
launch is still captured. For the guard the current VmRSS is reported instead:
it drops its clean file pages right after the fork, so its VmHWM is the
executor's start-up, not what it holds while the task runs. Once the first
end stamp exists the processes already found are still sampled, but /proc is
no longer scanned for another executor or guard when the sampled one is gone:
that scan took CPU from the job's end being measured.

After each run every process still carrying the run's marker (TONY_APP_ID of
the job, or the BENCH_RUN_ID this script puts in the launcher's environment)
is reported and killed, and the run's temporary directory is removed.
"""

import argparse
import datetime
import glob
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TONY = os.path.join(os.path.dirname(HERE), "build", "tony")
PYTHON = "/usr/bin/python3"

# torch 1.13 on Python 3.11: Std.from_str("0") returns None (iteration over an
# IntFlag no longer yields the 0 / composite members), so plain torchrun
# crashes in to_map(). The shim restores the intended value (Std.NONE) and
# otherwise runs torch.distributed.run.main() unchanged.
TORCHRUN_SHIM = r'''
import sys
from torch.distributed.elastic.multiprocessing import api as _api
if _api.Std.from_str("0") is None:
    _orig = _api.Std.from_str.__func__
    def _from_str(cls, vm):
        r = _orig(cls, vm)
        return _api.Std.NONE if r is None else r
    _api.Std.from_str = classmethod(_from_str)
from torch.distributed.run import main
sys.argv[0] = "torchrun"
main()
'''


def stamp_command(index_var, sleep_s):
    return ('date +%%s%%N > "$STAMP_DIR/worker.$%s"; sleep %s; date +%%s%%N > "$STAMP_DIR/end.$%s"'
            % (index_var, sleep_s, index_var))


class ExitWatch:
    """The wall-clock time (ns) at which a process exits, from a thread blocked in waitpid."""

    def __init__(self, popen):
        self.ns = None
        self._thread = threading.Thread(target=self._wait, args=(popen,), daemon=True)
        self._thread.start()

    def _wait(self, popen):
        popen.wait()
        self.ns = time.time_ns()

    def join(self, timeout):
        self._thread.join(timeout)


# ---------------------------------------------------------------- /proc helpers

def read_status(pid):
    """VmHWM, VmRSS, RssAnon, RssFile, RssShmem in kB, or None if gone."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"):
                    out[k] = int(v.split()[0])
    except (OSError, ValueError):
        return None
    return out if "VmHWM" in out else None


def read_pss(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def top_mappings(pid, count=8):
    """[(kB Rss, kB Pss, file)] of the file mappings with the most resident pages."""
    per = {}
    cur = None
    try:
        with open("/proc/%d/smaps" % pid) as f:
            for line in f:
                parts = line.split()
                if not parts:
                    continue
                if not parts[0].endswith(":") or "-" in parts[0]:
                    cur = parts[5] if len(parts) >= 6 else "[anon]"
                    per.setdefault(cur, [0, 0])
                elif parts[0] == "Rss:":
                    per[cur][0] += int(parts[1])
                elif parts[0] == "Pss:":
                    per[cur][1] += int(parts[1])
    except (OSError, ValueError, KeyError):
        return []
    rows = sorted(((v[0], v[1], k) for k, v in per.items()), reverse=True)
    return rows[:count]


def read_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def read_environ(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def all_pids():
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            yield int(name)


def pids_with_env(markers):
    """Pids whose environment contains any of the NAME=VALUE byte strings."""
    found = []
    for pid in all_pids():
        env = read_environ(pid)
        if any(m in env for m in markers):
            found.append(pid)
    return found


def find_executor(app_id, role=b"executor"):
    """One `tony executor` of the job, or with role=b"guard" one executor's guard."""
    marker = ("TONY_APP_ID=%s" % app_id).encode()
    for pid in all_pids():
        argv = read_cmdline(pid)
        if len(argv) >= 2 and argv[0].endswith(b"tony") and argv[1] == role:
            if marker in read_environ(pid):
                return pid
    return None


class Peak:
    """Keeps the max VmHWM and the sample with the largest VmRSS."""

    def __init__(self):
        self.hwm = 0
        self.best = None
        self.pss = None

    def sample(self, pid):
        st = read_status(pid)
        if st is None:
            return False
        self.hwm = max(self.hwm, st["VmHWM"])
        if self.best is None or st["VmRSS"] >= self.best["VmRSS"]:
            self.best = st
            pss = read_pss(pid)
            if pss is not None:
                self.pss = pss
        return True

    def as_dict(self):
        if self.best is None:
            return None
        d = dict(self.best)
        d["VmHWM"] = self.hwm
        d["Pss"] = self.pss
        return d


def cleanup(markers, tmp, popen, label):
    """Kill everything still carrying a marker; return the leftovers found."""
    leftovers = []
    if popen is not None and popen.poll() is None:
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except OSError:
            pass
        popen.wait()
    grace = time.monotonic() + 2.0  # let an AM / executor finish exiting on its own
    while pids_with_env(markers) and time.monotonic() < grace:
        time.sleep(0.05)
    for _ in range(3):
        pids = pids_with_env(markers)
        if not pids:
            break
        for pid in pids:
            leftovers.append((pid, b" ".join(read_cmdline(pid)).decode(errors="replace")))
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
    if leftovers:
        sys.stderr.write("warning: %s left %d process(es), killed: %s\n"
                         % (label, len(leftovers), leftovers[:5]))
    shutil.rmtree(tmp, ignore_errors=True)
    return leftovers


def read_stamps(stamp_dir, n, kind="worker"):
    stamps = []
    for i in range(n):
        try:
            with open(os.path.join(stamp_dir, "%s.%d" % (kind, i))) as f:
                stamps.append(int(f.read().strip()))
        except (OSError, ValueError):
            pass
    return stamps


def wait_stamps(stamp_dir, n, popen, deadline):
    """Poll cheaply (every 5 ms) until all n start stamp files exist."""
    def started():
        return sum(1 for name in os.listdir(stamp_dir) if name.startswith("worker.")) >= n
    while time.monotonic() < deadline:
        if started():
            return True
        if popen is not None and popen.poll() is not None:
            return started()
        time.sleep(0.005)
    return False


def end_ms(stamp_dir, n, exit_watch):
    """The launcher's exit after the last task's end stamp, in ms; None if unknown."""
    ends = read_stamps(stamp_dir, n, "end")
    if len(ends) != n or exit_watch.ns is None:
        return None
    return (exit_watch.ns - max(ends)) / 1e6


# ---------------------------------------------------------------- runs

def run_tony_without_tls(args, n):
    return run_tony(args, n, ["--conf", "tony.am.tls.enabled=false"])


def run_tony(args, n, extra=()):
    tmp = tempfile.mkdtemp(prefix="tony-bench-")
    home = os.path.join(tmp, "home")
    stamps = os.path.join(tmp, "stamps")
    os.makedirs(home)
    os.makedirs(stamps)
    run_id = uuid.uuid4().hex
    env = dict(os.environ, TONY_HOME=home, BENCH_RUN_ID=run_id)
    cmd = [args.tony, "submit",
           # tony already runs the command through /bin/sh -c, so the bare
           # command gives exactly one shell per task, as with torchrun.
           "--conf", "tony.containers.command=" + stamp_command("TASK_INDEX", args.sleep),
           "--shell_env", "STAMP_DIR=" + stamps,
           "--conf", "tony.worker.instances=%d" % n,
           "--conf", "tony.worker.memory=64m",
           "--conf", "tony.local.vcores=%d" % max(64, 2 * n)] + list(extra)
    out = open(os.path.join(tmp, "submit.out"), "wb")
    res = {"ok": False}
    popen = None
    app_id = None
    try:
        deadline = time.monotonic() + args.timeout
        t0 = time.time_ns()
        m0 = time.monotonic_ns()
        popen = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        exit_watch = ExitWatch(popen)
        wait_stamps(stamps, n, popen, deadline)
        am, ex, guard = Peak(), Peak(), Peak()
        am_pid = ex_pid = guard_pid = None
        ending = False
        while popen.poll() is None and time.monotonic() < deadline:
            # Once a task has ended the job's end is being measured: the processes already found
            # are still sampled, but no scan of /proc looks for another (its CPU would be the end's).
            if not ending:
                ending = any(name.startswith("end.") for name in os.listdir(stamps))
            if ending:
                for peak, pid in ((am, am_pid), (ex, ex_pid), (guard, guard_pid)):
                    if pid is not None:
                        peak.sample(pid)
                time.sleep(0.02)
                continue
            if am_pid is None:
                pidfiles = glob.glob(os.path.join(home, "jobs", "*", "am.pid"))
                if pidfiles:
                    app_id = os.path.basename(os.path.dirname(pidfiles[0]))
                    try:
                        with open(pidfiles[0]) as f:
                            am_pid = int(f.read().split()[0])  # "pid starttime"
                    except (OSError, ValueError):
                        am_pid = None
            if am_pid is not None:
                am.sample(am_pid)
            if app_id is not None:
                if ex_pid is None or not ex.sample(ex_pid):
                    ex_pid = find_executor(app_id)
                    if ex_pid is not None:
                        ex.sample(ex_pid)
                        if "ex_maps" not in res:
                            res["ex_maps"] = top_mappings(ex_pid)
                if guard_pid is None or not guard.sample(guard_pid):
                    guard_pid = find_executor(app_id, b"guard")
                    if guard_pid is not None:
                        guard.sample(guard_pid)
            time.sleep(0.02)
        try:
            rc = popen.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            rc = None
        m1 = time.monotonic_ns()
        if app_id is None:
            jobs = glob.glob(os.path.join(home, "jobs", "*"))
            app_id = os.path.basename(jobs[0]) if jobs else None
        st = read_stamps(stamps, n)
        res.update(rc=rc, total_ms=(m1 - m0) / 1e6, am=am.as_dict(), executor=ex.as_dict(),
                   guard=guard.as_dict(), stamps=len(st))
        exit_watch.join(1.0)
        if rc == 0 and len(st) == n:
            res["ok"] = True
            res["launch_ms"] = (max(st) - t0) / 1e6
            res["first_ms"] = (min(st) - t0) / 1e6
            res["end_ms"] = end_ms(stamps, n, exit_watch)
        else:
            out.flush()
            with open(os.path.join(tmp, "submit.out"), errors="replace") as f:
                res["error"] = "rc=%s stamps=%d/%d\n%s" % (rc, len(st), n, f.read()[-2000:])
    finally:
        out.close()
        markers = [("BENCH_RUN_ID=%s" % run_id).encode()]
        if app_id:
            markers.append(("TONY_APP_ID=%s" % app_id).encode())
        res["leftovers"] = len(cleanup(markers, tmp, popen, "tony N=%d" % n))
    return res


def run_torchrun(args, n):
    tmp = tempfile.mkdtemp(prefix="torchrun-bench-")
    stamps = os.path.join(tmp, "stamps")
    os.makedirs(stamps)
    shim = os.path.join(tmp, "torchrun_shim.py")
    with open(shim, "w") as f:
        f.write(TORCHRUN_SHIM)
    run_id = uuid.uuid4().hex
    # TMPDIR keeps torchelastic's log/error-file directories inside tmp.
    env = dict(os.environ, STAMP_DIR=stamps, TMPDIR=tmp, BENCH_RUN_ID=run_id)
    cmd = [PYTHON, shim, "--standalone", "--nnodes", "1", "--nproc_per_node", str(n),
           "--no_python", "sh", "-c", stamp_command("LOCAL_RANK", args.sleep)]
    out = open(os.path.join(tmp, "torchrun.out"), "wb")
    res = {"ok": False}
    popen = None
    try:
        deadline = time.monotonic() + args.timeout
        t0 = time.time_ns()
        m0 = time.monotonic_ns()
        popen = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        exit_watch = ExitWatch(popen)
        wait_stamps(stamps, n, popen, deadline)
        launcher = Peak()
        while popen.poll() is None and time.monotonic() < deadline:
            launcher.sample(popen.pid)
            time.sleep(0.02)
        try:
            rc = popen.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            rc = None
        m1 = time.monotonic_ns()
        st = read_stamps(stamps, n)
        res.update(rc=rc, total_ms=(m1 - m0) / 1e6, launcher=launcher.as_dict(), stamps=len(st))
        exit_watch.join(1.0)
        if rc == 0 and len(st) == n:
            res["ok"] = True
            res["launch_ms"] = (max(st) - t0) / 1e6
            res["first_ms"] = (min(st) - t0) / 1e6
            res["end_ms"] = end_ms(stamps, n, exit_watch)
        else:
            out.flush()
            with open(os.path.join(tmp, "torchrun.out"), errors="replace") as f:
                res["error"] = "rc=%s stamps=%d/%d\n%s" % (rc, len(st), n, f.read()[-2000:])
    finally:
        out.close()
        res["leftovers"] = len(cleanup([("BENCH_RUN_ID=%s" % run_id).encode()], tmp, popen,
                                       "torchrun N=%d" % n))
    return res


def run_direct(args, n):
    tmp = tempfile.mkdtemp(prefix="direct-bench-")
    stamps = os.path.join(tmp, "stamps")
    os.makedirs(stamps)
    run_id = uuid.uuid4().hex
    res = {"ok": False}
    procs = []
    try:
        t0 = time.time_ns()
        for i in range(n):
            env = dict(os.environ, STAMP_DIR=stamps, BENCH_RUN_ID=run_id, LOCAL_RANK=str(i))
            procs.append(subprocess.Popen(["sh", "-c", stamp_command("LOCAL_RANK", args.sleep)],
                                          env=env, stdin=subprocess.DEVNULL,
                                          start_new_session=True))
        deadline = time.monotonic() + args.timeout
        for p in procs:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        st = read_stamps(stamps, n)
        if len(st) == n and all(p.returncode == 0 for p in procs):
            res["ok"] = True
            res["launch_ms"] = (max(st) - t0) / 1e6
    except subprocess.TimeoutExpired:
        res["error"] = "timeout"
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                p.wait()
        cleanup([("BENCH_RUN_ID=%s" % run_id).encode()], tmp, None, "direct N=%d" % n)
    return res


# ---------------------------------------------------------------- report

def mb(kb):
    return "-" if kb is None else "%.1f" % (kb / 1024.0)


def med_min(values):
    if not values:
        return "-"
    return "%.1f/%.1f" % (statistics.median(values), min(values))


def peak_of(dicts, key):
    vals = [d[key] for d in dicts if d and d.get(key) is not None]
    return max(vals) if vals else None


def machine_line():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    return ("machine: nproc=%d, %s, kernel %s, python %s, load avg %s; %s"
            % (os.cpu_count() or 0, model, platform.release(), platform.python_version(),
               " ".join(load), datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="1,8,32", help="comma-separated task counts (default 1,8,32)")
    ap.add_argument("--repeats", type=int, default=5, help="runs per launcher and task count (default 5)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    ap.add_argument("--sleep", default="1", help="seconds each task sleeps after stamping (default 1)")
    ap.add_argument("--tony", default=DEFAULT_TONY, help="tony binary (default: build/tony)")
    ap.add_argument("--no-torchrun", action="store_true", help="skip the torchrun peer")
    ap.add_argument("--warmup", type=int, default=1, help="untimed warm-up runs of each launcher (default 1)")
    ap.add_argument("--tls-compare", action="store_true",
                    help="also run tony with tony.am.tls.enabled=false: what TLS costs the launch")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run")
    args = ap.parse_args()

    tasks = [int(x) for x in args.tasks.split(",") if x.strip()]
    if not os.access(args.tony, os.X_OK):
        sys.exit("tony binary not found at %s (build it first)" % args.tony)
    have_torch = not args.no_torchrun and subprocess.run(
        [PYTHON, "-c", "import torch.distributed.run"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0
    if not args.no_torchrun and not have_torch:
        sys.stderr.write("note: torch.distributed.run not importable by %s; torchrun skipped\n" % PYTHON)

    # Warm the page cache (binary, shared libraries, torch's Python modules).
    for _ in range(args.warmup):
        run_tony(args, 1)
        if have_torch:
            run_torchrun(args, 1)

    results = {}
    failures = 0
    for n in tasks:
        rows = {"tony": [], "torchrun": [], "direct": [], "tony-notls": []}
        for r in range(args.repeats):
            order = [("tony", run_tony), ("direct", run_direct)]
            if args.tls_compare:
                order.append(("tony-notls", run_tony_without_tls))
            if have_torch:
                order.append(("torchrun", run_torchrun))
            for name, fn in order:
                res = fn(args, n)
                rows[name].append(res)
                if not res["ok"]:
                    failures += 1
                    sys.stderr.write("%s N=%d run %d failed: %s\n" % (name, n, r, res.get("error")))
                if args.verbose:
                    brief = {k: v for k, v in res.items() if k != "error"}
                    print("%-8s N=%-3d run %d: %s" % (name, n, r, brief), flush=True)
        results[n] = rows

    print()
    print(machine_line())
    print("launch = last task's `date` stamp - t0 just before spawning the launcher "
          "(includes one /bin/sh + date start, ~1-2 ms: see `direct`). ms are median/min over "
          "%d runs; RSS is the max VmHWM over all runs." % args.repeats)
    print("tony submit total includes the tasks' %s s sleep and the AM's shutdown." % args.sleep)
    hdr = ("%-5s  %-17s  %-17s  %-6s  %-15s  %-12s  %-10s  %-30s  %-10s  %-16s  %-12s"
           % ("tasks", "tony launch ms", "torchrun launch", "ratio", "direct spawn ms",
              "tony total ms", "AM peak MB", "executor peak MB (anon/file)", "exec PSS",
              "guard RSS (PSS)", "torchrun MB"))
    print(hdr)
    print("-" * len(hdr))
    for n in tasks:
        rows = results[n]
        tl = [r["launch_ms"] for r in rows["tony"] if r["ok"]]
        ql = [r["launch_ms"] for r in rows["torchrun"] if r["ok"]]
        dl = [r["launch_ms"] for r in rows["direct"] if r["ok"]]
        tt = [r["total_ms"] for r in rows["tony"] if r["ok"]]
        ratio = ("%.2f" % (statistics.median(tl) / statistics.median(ql))) if tl and ql else "-"
        ams = [r.get("am") for r in rows["tony"]]
        exs = [r.get("executor") for r in rows["tony"]]
        gds = [r.get("guard") for r in rows["tony"]]
        lns = [r.get("launcher") for r in rows["torchrun"]]
        # anon/file of the run with the highest executor VmHWM
        ex_best = max((e for e in exs if e), key=lambda e: e["VmHWM"], default=None)
        ex_txt = ("%s (%s/%s)" % (mb(ex_best["VmHWM"]), mb(ex_best.get("RssAnon")),
                                  mb(ex_best.get("RssFile")))) if ex_best else "-"
        print("%-5d  %-17s  %-17s  %-6s  %-15s  %-12s  %-10s  %-30s  %-10s  %-16s  %-12s"
              % (n, med_min(tl), med_min(ql) if have_torch else "skipped", ratio, med_min(dl),
                 ("%.0f" % statistics.median(tt)) if tt else "-",
                 mb(peak_of(ams, "VmHWM")), ex_txt, mb(peak_of(exs, "Pss")),
                 "%s (%s)" % (mb(peak_of(gds, "VmRSS")), mb(peak_of(gds, "Pss"))),
                 mb(peak_of(lns, "VmHWM")) if have_torch else "-"))
    if args.tls_compare:
        print("TLS on the control plane (tony.am.tls.enabled): launch ms median/min, with / without")
        for n in tasks:
            on = [r["launch_ms"] for r in results[n]["tony"] if r["ok"]]
            off = [r["launch_ms"] for r in results[n]["tony-notls"] if r["ok"]]
            ratio = ("%.2f" % (statistics.median(on) / statistics.median(off))) if on and off else "-"
            print("  %d tasks: %s with TLS, %s without, ratio %s" % (n, med_min(on), med_min(off), ratio))
    print("job end: the launcher's exit after its last task ended, ms median/min")
    for n in tasks:
        te = [r["end_ms"] for r in results[n]["tony"] if r["ok"] and r.get("end_ms") is not None]
        qe = [r["end_ms"] for r in results[n]["torchrun"]
              if r["ok"] and r.get("end_ms") is not None]
        ratio = ("%.2f" % (statistics.median(te) / statistics.median(qe))) if te and qe else "-"
        print("  %d tasks: tony %s, torchrun %s, ratio %s"
              % (n, med_min(te), med_min(qe) if have_torch else "skipped", ratio))
    maps = [r["ex_maps"] for n in tasks for r in results[n]["tony"] if r.get("ex_maps")]
    if maps:
        print("one tony executor's largest mappings (Rss kB / Pss kB, N=%d): %s" % (
            tasks[-1], "; ".join("%s %d/%d" % (os.path.basename(f), rss, pss)
                                 for rss, pss, f in maps[-1][:6])))
    leftovers = sum(r.get("leftovers", 0) for rows in results.values()
                    for k in rows.values() for r in k)
    print("failed runs: %d; leftover processes killed after runs: %d" % (failures, leftovers))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
