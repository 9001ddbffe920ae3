#!/usr/bin/python3
"""Goodput under faults: how much of a training job's time survives one fault (stdlib only).

The job (bench/goodput_job.py) is fixed work for two PyTorch DDP ranks that checkpoints every few
steps into TONY_CHECKPOINT_DIR. It runs once without a fault, then once under each fault:

  kill     rank 1's process is killed (SIGKILL, by itself, at a set step);
  stop     rank 1's process is stopped (SIGSTOP: as a deadlock or a stuck read looks);
  kill-am  the AM is killed (SIGKILL, by the bench, at the same point in time);
  preempt  (yarn) the CapacityScheduler preempts a rank's container: at the same point in time the
           bench submits a job to the urgent queue that does not fit while the ranks run (the
           cluster: two 1 GB NodeManagers, queues default and urgent of half of it each, the
           preemption monitor on: scripts/hadoop-minicluster --preemption);
  lose-node (yarn) the NodeManager under a rank (never the AM's) stops (scripts/hadoop-minicluster
           stop-nm; three 1 GB NodeManagers): its containers are killed and reported lost.

each handled two ways:

  tony      what tony does: a gang restart in the containers the ranks have (the pytorch default,
            tony.worker.max-restarts=1, tony.task.hang-timeout-ms for `stop`), or for kill-am a
            second AM attempt (tony.am.retry-count=1): locally it adopts the running ranks, which
            train on untouched; on YARN it runs the job again from the checkpoint;
  resubmit  TonY's way: the job fails (no restarts, no hang detection) and is submitted again,
            resuming from the same checkpoint directory (generous to it: TonY gives its tasks no
            such directory). A job that never ends (a stopped rank without hang detection) is
            given up at --give-up times the fault-free time. tony restarts after a preemption or
            a lost node whatever its restart settings, so for those the bench ends the first job
            itself (`tony kill`) at the moment tony decides to restart, where TonY's would fail.

Measured (wall clock, from the lines the ranks print and the AM's log):
  total    from the first submit to the last client's exit;
  detect   from the fault to tony's decision (the AM's "gang restart" line; for kill-am, the
           client's "AM attempt 2"; for resubmit, the failed client's exit);
  recover  from that decision to rank 0 training again (its "starts at step" line); 0 when the
           ranks never stopped (an AM attempt that adopted them);
  redone   steps computed twice (rank 0's last step before the fault minus the checkpoint's);
  goodput  fault-free total / total.

--backend yarn runs on a Hadoop mini cluster (scripts/hadoop-minicluster --preemption, two 1 GB
NodeManagers, three for lose-node; each rank asks for 640 MB there, so that no two share a
NodeManager: two 512 MB ranks on one left the scheduler deadlocked between the urgent job's
reservation and the preempted rank's new request), in a temporary directory or --cluster-dir: the
bench (re)starts it with the options each fault needs (a stopped NodeManager leaves it smaller),
and stops it at the end.
"""

import argparse
import datetime
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TONY = os.path.join(ROOT, "build", "tony")
MINICLUSTER = os.path.join(ROOT, "scripts", "hadoop-minicluster")
AM_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ")


class Cluster:
    def __init__(self, cluster_dir):
        self.owned = cluster_dir is None
        self.dir = os.path.realpath(cluster_dir or tempfile.mkdtemp(prefix="tony-goodput-mc-"))
        self.started = False
        self.nodemanagers = 0  # of the cluster running now, 0: none
        self.dirty = False     # a NodeManager of it was stopped

    def start(self, nodemanagers=2):
        """A --preemption cluster of `nodemanagers` 1 GB NodeManagers, all running."""
        if self.nodemanagers == nodemanagers and not self.dirty:
            return
        subprocess.run([MINICLUSTER, "stop", self.dir], stdin=subprocess.DEVNULL)
        self.started = True
        subprocess.run([MINICLUSTER, "start", self.dir, "--preemption", "--nodemanagers",
                        str(nodemanagers), "--nm-memory-mb", "1024", "--gpus", "0"],
                       check=True, stdin=subprocess.DEVNULL)
        self.nodemanagers = nodemanagers
        self.dirty = False

    def stop_nodemanager(self, index):
        self.dirty = True
        subprocess.run([MINICLUSTER, "stop-nm", self.dir, str(index)], check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def stop(self):
        if self.started:
            subprocess.run([MINICLUSTER, "stop", self.dir], stdin=subprocess.DEVNULL)
        if self.owned:
            shutil.rmtree(self.dir, ignore_errors=True)

    def am_logs(self, app_id):
        return sorted(glob.glob(os.path.join(self.dir, "data", "yarn", "*", "*", "*-logDir-nm-*",
                                             app_id, "container_*_000001", "am.log")))


def am_line_time(paths, text):
    """Wall time of the first line containing text in these AM logs, or None."""
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    m = AM_LOG_TIME.match(line)
                    if m and text in line:
                        return datetime.datetime.strptime(
                            m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
        except OSError:
            pass
    return None


def job_pids(app_id, match):
    """The pids of the job's processes (app_id in their environment) whose argv match(es)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if match(argv) and app_id.encode() in environ:
            found.append(int(pid))
    return found


def am_pids(app_id):
    return job_pids(app_id, lambda argv: len(argv) > 1 and argv[1] == b"am")


def nodemanager_of(pid):
    """The index of the mini cluster NodeManager whose container directory pid runs in, or None."""
    try:
        m = re.search(r"-localDir-nm-(\d+)_\d+/", os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None
    return int(m.group(1)) if m else None


def lose_a_ranks_node(cluster, app_id):
    """Stops the NodeManager of a rank that does not share the AM's; True if one was stopped."""
    am = {nodemanager_of(pid) for pid in am_pids(app_id)}
    for pid in job_pids(app_id, lambda argv: any(a.endswith(b"goodput_job.py") for a in argv)):
        node = nodemanager_of(pid)
        if node is not None and node not in am:
            cluster.stop_nodemanager(node)
            return True
    return False


def submit_urgent(ctx, work):
    """A one-worker job in the urgent queue that fits only once a rank's container is taken."""
    args = [ctx.args.tony, "submit", "--backend", "yarn", "--conf", "tony.am.memory=256m",
            "--conf", "tony.yarn.queue=urgent", "--conf", "tony.worker.instances=1",
            "--conf", "tony.worker.memory=768m",
            "--conf", f"tony.containers.command=sleep {ctx.args.urgent_s}"]
    env = dict(os.environ, TONY_HOME=os.path.join(work, "urgent-home"),
               HADOOP_CONF_DIR=ctx.cluster.dir)
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Submission:
    """One `tony submit --tee`: its lines with the time each was read."""

    def __init__(self, args, env, limit_s):
        self.t0 = time.time()
        self.lines = []
        self.app_id = None
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.limit_s = limit_s

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append((time.time(), line.rstrip("\n")))
            m = re.search(r"tony: submitted (application_\d+_\d+)", line)
            if m:
                self.app_id = m.group(1)

    def wait(self):
        """The client's exit code, or None when it was given up at its limit (and killed)."""
        try:
            code = self.proc.wait(timeout=max(1, self.t0 + self.limit_s - time.time()))
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            code = None
        self.reader.join(timeout=10)
        self.end = time.time()
        return code

    def first(self, pattern, after=0.0):
        for t, line in self.lines:
            m = re.search(pattern, line)
            if m and t >= after:
                return t, m
        return None, None


def run(ctx, fault, way):
    work = tempfile.mkdtemp(prefix="tony-goodput-")
    checkpoints = os.path.join(work, "checkpoints")
    os.makedirs(checkpoints)
    job_fault = fault if fault in ("kill", "stop") else "none"
    command = (f"/usr/bin/python3 goodput_job.py --steps {ctx.args.steps} --step-s "
               f"{ctx.args.step_s} --checkpoint-every {ctx.args.checkpoint_every} "
               f"--fault {job_fault} --fault-at {ctx.fault_step}")
    conf = ["tony.application.framework=pytorch", "tony.worker.instances=2",
            f"tony.worker.memory={640 if ctx.cluster else 512}m",
            "tony.worker.restart-backoff-ms=0",
            "tony.task.stop-grace-ms=2000", f"tony.application.checkpoint-dir={checkpoints}",
            f"tony.containers.command={command}"]
    if way == "tony":
        conf += ["tony.worker.max-restarts=1", "tony.am.retry-count=1",
                 f"tony.task.hang-timeout-ms={ctx.args.hang_timeout_ms}"]
    args = [ctx.args.tony, "submit", "--tee", "--src_dir", os.path.join(ROOT, "bench")]
    env = dict(os.environ, TONY_HOME=os.path.join(work, "home"))
    if ctx.cluster:
        args += ["--backend", "yarn", "--conf", "tony.am.memory=256m"]
        env["HADOOP_CONF_DIR"] = ctx.cluster.dir
    else:
        args += ["--conf", "tony.local.vcores=8"]
    for c in conf:
        args += ["--conf", c]
    limit = ctx.baseline * ctx.args.give_up if ctx.baseline else 3600
    if ctx.cluster:
        ctx.cluster.start(3 if fault == "lose-node" else 2)
    t_start = time.time()
    result = {"fault": fault, "way": way}
    first = Submission(args, env, limit)
    fault_time = None
    urgent = None
    if fault in ("kill-am", "preempt", "lose-node"):
        started, _ = (None, None)
        while started is None and first.proc.poll() is None:
            started, _ = first.first(r"goodput: rank 0 starts at step")
            time.sleep(0.05)
        time.sleep(ctx.fault_step * ctx.args.step_s)
        fault_time = time.time()
        if fault == "kill-am":
            for pid in am_pids(first.app_id or ""):
                os.kill(pid, signal.SIGKILL)
        elif fault == "preempt":
            urgent = submit_urgent(ctx, work)
        elif not lose_a_ranks_node(ctx.cluster, first.app_id or ""):
            sys.exit("lose-node: no rank runs on a NodeManager of its own")
    if way == "resubmit" and fault in ("preempt", "lose-node"):
        # TonY's job fails where tony's decides to restart the gang: end it there.
        logs = lambda: ctx.cluster.am_logs(first.app_id)
        while first.proc.poll() is None and am_line_time(logs(), "gang restart 1") is None:
            time.sleep(0.05)
        subprocess.run([ctx.args.tony, "kill", first.app_id], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    code = first.wait()
    runs = [first]
    if way == "resubmit" and code != 0:
        result["failed_after_s"] = first.end - t_start
        if code is not None:  # a job that never ended is not resubmitted: it was given up
            second = Submission(args, env, limit - (time.time() - t_start))
            code = second.wait()
            runs.append(second)
    t_end = time.time()
    if urgent is not None:
        try:
            urgent.wait(timeout=300)
        except subprocess.TimeoutExpired:
            urgent.kill()
    result["ok"] = code == 0
    result["total_s"] = t_end - t_start
    if fault_time is None:
        for r in runs:
            t, m = r.first(r"goodput: fault at ([0-9.]+)")
            if m:
                fault_time = float(m.group(1))
    # The decision.
    decided = None
    if fault_time is not None:
        if way == "tony" and fault != "kill-am":
            logs = (ctx.cluster.am_logs(first.app_id) if ctx.cluster else
                    [os.path.join(env["TONY_HOME"], "jobs", first.app_id or "-", "am.log")])
            decided = am_line_time(logs, "gang restart 1")
        elif way == "tony":
            decided, _ = first.first(r"tony: AM attempt 2", fault_time)
        elif len(runs) > 1:
            decided = runs[0].end
    # Where rank 0 was when the fault came (its last step line before it), and where it resumed.
    resumed = None
    redone = None
    reached = 0
    for t, line in runs[0].lines:
        step = re.search(r"\] rank 0 step (\d+)$", line)
        if step and fault_time is not None and t <= fault_time:
            reached = int(step.group(1))
    # A resubmitted job resumes in the second submission (the first may have restarted its gang
    # before the bench's kill reached it).
    for r in runs[1:] if way == "resubmit" and len(runs) > 1 else runs:
        for t, line in r.lines:
            m = re.search(r"goodput: rank 0 starts at step (\d+) at ([0-9.]+)", line)
            if m and fault_time is not None and float(m.group(2)) > fault_time:
                resumed = float(m.group(2))
                redone = max(0, reached - int(m.group(1)))
                break
        if resumed:
            break
    done = [line for r in runs for _, line in r.lines if "goodput: rank 0 done" in line]
    if done:
        result["weights_ok"] = f"weights {3 * ctx.args.steps} of {3 * ctx.args.steps}" in done[-1]
    if (fault_time is not None and way == "tony" and fault == "kill-am" and decided
            and resumed is None and code == 0):
        # The next AM attempt adopted the ranks: they never started again, so nothing was redone.
        resumed, redone = decided, 0
    if fault_time is not None:
        result["detect_s"] = decided - fault_time if decided else None
        result["recover_s"] = resumed - decided if resumed and decided else None
        result["redone"] = redone
    if ctx.args.verbose and not result["ok"]:
        for r in runs:
            print("\n".join(f"{t:.3f} {line}" for t, line in r.lines
                            if "waits for the others" not in line), file=sys.stderr)
            for path in ctx.cluster.am_logs(r.app_id or "-") if ctx.cluster else []:
                with open(path, errors="replace") as f:
                    print(f"--- {path}\n{f.read()}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    return result


class Context:
    pass


def fmt(value, spec="{:.1f}"):
    return "-" if value is None else spec.format(value)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["local", "yarn"], default="local")
    ap.add_argument("--cluster-dir", help="yarn: the mini cluster to use (or start and stop)")
    ap.add_argument("--tony", default=TONY)
    ap.add_argument("--steps", type=int, default=180, help="steps of the job (default 180)")
    ap.add_argument("--step-s", type=float, default=1.0, help="seconds a step (default 1)")
    ap.add_argument("--checkpoint-every", type=int, default=10, help="steps (default 10)")
    ap.add_argument("--fault-at", type=float, default=0.45,
                    help="when the fault comes, as a share of the steps (default 0.45)")
    ap.add_argument("--hang-timeout-ms", type=int, default=15000)
    ap.add_argument("--give-up", type=float, default=3.0,
                    help="a run that takes this many times the fault-free time is given up")
    ap.add_argument("--faults", default="kill,stop,kill-am",
                    help="of kill, stop, kill-am, and on yarn preempt and lose-node")
    ap.add_argument("--urgent-s", type=float, default=10.0,
                    help="preempt: how long the urgent job's worker runs (default 10)")
    ap.add_argument("--ways", default="tony,resubmit")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    ctx = Context()
    ctx.args = args
    ctx.fault_step = int(args.steps * args.fault_at)
    ctx.baseline = None
    ctx.cluster = Cluster(args.cluster_dir) if args.backend == "yarn" else None
    if ctx.cluster is None and ({"preempt", "lose-node"} & set(args.faults.split(","))):
        sys.exit("preempt and lose-node need --backend yarn")
    try:
        base = run(ctx, "none", "tony")
        if not base["ok"]:
            sys.exit("the fault-free run failed")
        ctx.baseline = base["total_s"]
        print(f"backend {args.backend}: {args.steps} steps of {args.step_s} s, a checkpoint every "
              f"{args.checkpoint_every} steps, the fault at step {ctx.fault_step}; fault-free "
              f"{ctx.baseline:.1f} s")
        print(f"{'fault':8} {'way':9} {'ok':3} {'total s':>8} {'detect s':>9} {'recover s':>10} "
              f"{'redone':>7} {'goodput':>8}")
        for fault in args.faults.split(","):
            for way in args.ways.split(","):
                r = run(ctx, fault, way)
                goodput = ctx.baseline / r["total_s"] if r["ok"] else None
                ok = "yes" if r["ok"] and r.get("weights_ok", False) else "no"
                print(f"{fault:8} {way:9} {ok:3} {r['total_s']:8.1f} {fmt(r.get('detect_s')):>9} "
                      f"{fmt(r.get('recover_s')):>10} {fmt(r.get('redone'), '{}'):>7} "
                      f"{fmt(goodput, '{:.2f}'):>8}", flush=True)
    finally:
        if ctx.cluster:
            ctx.cluster.stop()


if __name__ == "__main__":
    main()
