#!/usr/bin/python3
"""How fast tony reacts to a dead worker, on the local backend (default) or on YARN.

For each repeat, runs a 2-worker job whose tasks sleep, kills worker:1's user process with
SIGKILL at t0, and measures from t0:
  decide  - with tony.application.fail-on-worker-failure-enabled: until the AM decided the job
            FAILED (the AM's log line), and until `tony submit` exited;
  restart - with tony.worker.max-restarts=1 and restart-backoff-ms=0: until the new attempt of
            worker:1 started its user process (it writes a time stamp).
The heartbeat interval is printed next to them: the target is a decision within one interval,
since the backend sees the container's exit at once.

--backend yarn runs the same jobs on a Hadoop mini cluster (scripts/hadoop-minicluster): one
started in a temporary directory and stopped at the end, or the one in --cluster-dir (started
there and stopped if it is not running). The task processes are then children of the
NodeManager on this machine; worker:1's is found by TONY_APP_ID, JOB_NAME, TASK_INDEX and
ATTEMPT_NUMBER in its /proc environ, and the AM's "job FAILED" line is read from am.log in the
AM container's log directory under the cluster's data directory.
"""

import argparse
import datetime
import glob
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TONY = os.path.join(ROOT, "build", "tony")
MINICLUSTER = os.path.join(ROOT, "scripts", "hadoop-minicluster")


def find_user_process(home, index, attempt="0", marker=None):
    """The pid of worker:<index>'s sleeping user process, or None.

    It is found by TONY_HOME=home, or by marker (NAME, value) such as ("TONY_APP_ID", app id)."""
    key, value = marker or ("TONY_HOME", home)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if (env.get(key.encode()) == value.encode() and env.get(b"JOB_NAME") == b"worker"
                and env.get(b"TASK_INDEX") == str(index).encode()
                and env.get(b"ATTEMPT_NUMBER") == attempt.encode() and cmd.startswith(b"sleep")):
            return int(pid)
    return None


def wait_for(predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    raise TimeoutError("condition not met in time")


def am_log_time(job_dir, text, path=None):
    """Wall time of the first AM log line containing text (job_dir/am.log, or path)."""
    with open(path or os.path.join(job_dir, "am.log")) as f:
        for line in f:
            if text in line:
                stamp = " ".join(line.split()[:2])
                return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").timestamp()
    return None


def run(mode, heartbeat_ms, cluster=None):
    if cluster is not None:
        return run_yarn(mode, heartbeat_ms, cluster)
    home = tempfile.mkdtemp(prefix="tony-fbench-")
    stamps = tempfile.mkdtemp(prefix="tony-fbench-stamps-")
    conf = ["tony.worker.instances=2", "tony.worker.memory=64m", "tony.local.vcores=8",
            f"tony.task.heartbeat-interval-ms={heartbeat_ms}", "tony.task.stop-grace-ms=1000",
            f"tony.execution.envs=STAMPS={stamps}"]
    if mode == "decide":
        conf.append("tony.application.fail-on-worker-failure-enabled=true")
    else:
        conf += ["tony.worker.max-restarts=1", "tony.worker.restart-policy=task",
                 "tony.worker.restart-backoff-ms=0"]
    command = ('date +%s%N > "$STAMPS/$TASK_INDEX.$ATTEMPT_NUMBER"; exec sleep 600'
               if mode == "restart" else "exec sleep 600")
    args = [TONY, "submit", "--conf", f"tony.containers.command={command}"]
    for c in conf:
        args += ["--conf", c]
    env = dict(os.environ, TONY_HOME=home)
    client = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        victim = wait_for(lambda: find_user_process(home, 1), 60)
        wait_for(lambda: find_user_process(home, 0), 60)
        t0 = time.time()
        os.kill(victim, signal.SIGKILL)
        if mode == "decide":
            client.wait(timeout=60)
            exited = time.time()
            job_dir = os.path.join(home, "jobs", os.listdir(os.path.join(home, "jobs"))[0])
            decided = am_log_time(job_dir, "job FAILED")
            return (decided - t0) * 1000, (exited - t0) * 1000
        path = os.path.join(stamps, "1.1")
        wait_for(lambda: os.path.exists(path) and os.path.getsize(path) > 0, 60)
        with open(path) as f:
            started = int(f.read().strip()) / 1e9
        return (started - t0) * 1000, None
    finally:
        if client.poll() is None:
            client.send_signal(signal.SIGINT)
            client.wait(timeout=60)
        subprocess.run(["rm", "-rf", home, stamps])


# ---------------------------------------------------------------- YARN

class Cluster:
    """A scripts/hadoop-minicluster instance: started here (and stopped at the end) or reused."""

    def __init__(self, cluster_dir):
        self.owned_tmp = cluster_dir is None
        self.dir = os.path.realpath(cluster_dir or tempfile.mkdtemp(prefix="tony-fbench-cluster-"))
        self.started = False

    def start(self):
        if not self.owned_tmp and subprocess.run(
                [MINICLUSTER, "status", self.dir], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            return
        self.started = True
        subprocess.run([MINICLUSTER, "start", self.dir], check=True, stdin=subprocess.DEVNULL)

    def stop(self):
        if self.started:
            subprocess.run([MINICLUSTER, "stop", self.dir], stdin=subprocess.DEVNULL)
            self.started = False
        if self.owned_tmp:
            shutil.rmtree(self.dir, ignore_errors=True)

    def am_log(self, app_id):
        logs = sorted(glob.glob(os.path.join(self.dir, "data", "yarn", "*", "*", "*-logDir-nm-*",
                                             app_id, "container_*_000001", "am.log")))
        return logs[0] if logs else None

    def pids_of_app(self, app_id):
        """Processes working in one of the application's container directories."""
        root = os.path.join(self.dir, "data", "yarn")
        found = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    cwd = os.readlink(f"/proc/{pid}/cwd")
                except OSError:
                    continue
                if cwd.startswith(root) and f"/{app_id}/" in cwd + "/":
                    found.append(int(pid))
        return found


def run_yarn(mode, heartbeat_ms, cluster):
    """run() on YARN: the same job and measurements; the app id comes from `tony submit`."""
    home = tempfile.mkdtemp(prefix="tony-fbench-")
    stamps = tempfile.mkdtemp(prefix="tony-fbench-stamps-")
    conf = ["tony.worker.instances=2", "tony.worker.memory=128m", "tony.am.memory=256m",
            f"tony.task.heartbeat-interval-ms={heartbeat_ms}", "tony.task.stop-grace-ms=1000",
            f"tony.execution.envs=STAMPS={stamps}"]
    if mode == "decide":
        conf.append("tony.application.fail-on-worker-failure-enabled=true")
    else:
        conf += ["tony.worker.max-restarts=1", "tony.worker.restart-policy=task",
                 "tony.worker.restart-backoff-ms=0"]
    command = ('date +%s%N > "$STAMPS/$TASK_INDEX.$ATTEMPT_NUMBER"; exec sleep 600'
               if mode == "restart" else "exec sleep 600")
    args = [TONY, "submit", "--backend", "yarn", "--conf", f"tony.containers.command={command}"]
    for c in conf:
        args += ["--conf", c]
    env = dict(os.environ, TONY_HOME=home, HADOOP_CONF_DIR=cluster.dir)
    client = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    found = {}
    output = []

    def read():
        for line in client.stdout:
            output.append(line)
            m = re.search(r"tony: submitted (application_\d+_\d+)", line)
            if m:
                found["app_id"] = m.group(1)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    app_id = None
    try:
        app_id = wait_for(lambda: found.get("app_id") or (client.poll() is not None and "-"), 120)
        if app_id == "-":
            raise RuntimeError("tony submit exited without an application id:\n"
                               + "".join(output)[-2000:])
        marker = ("TONY_APP_ID", app_id)
        victim = wait_for(lambda: find_user_process(home, 1, marker=marker), 120)
        wait_for(lambda: find_user_process(home, 0, marker=marker), 120)
        t0 = time.time()
        os.kill(victim, signal.SIGKILL)
        if mode == "decide":
            client.wait(timeout=120)
            exited = time.time()
            log = wait_for(lambda: cluster.am_log(app_id), 10)
            decided = wait_for(lambda: am_log_time(None, "job FAILED", path=log), 10)
            return (decided - t0) * 1000, (exited - t0) * 1000
        path = os.path.join(stamps, "1.1")
        wait_for(lambda: os.path.exists(path) and os.path.getsize(path) > 0, 120)
        with open(path) as f:
            started = int(f.read().strip()) / 1e9
        return (started - t0) * 1000, None
    finally:
        if client.poll() is None:
            client.send_signal(signal.SIGINT)  # tony kills its job on SIGINT
            try:
                client.wait(timeout=60)
            except subprocess.TimeoutExpired:
                client.kill()
                client.wait()
        reader.join(timeout=10)
        if app_id and app_id != "-":
            # The NodeManager reaps the containers; kill whatever is still there after 10 s.
            deadline = time.time() + 10
            while cluster.pids_of_app(app_id) and time.time() < deadline:
                time.sleep(0.1)
            for pid in cluster.pids_of_app(app_id):
                sys.stderr.write(f"warning: killing leftover pid {pid} of {app_id}\n")
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        subprocess.run(["rm", "-rf", home, stamps])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    parser.add_argument("--backend", choices=["local", "yarn"], default="local")
    parser.add_argument("--cluster-dir", help="yarn: use (or start and stop) the mini cluster here")
    args = parser.parse_args()
    if not os.access(TONY, os.X_OK):
        sys.exit(f"{TONY} not found: build tony first (scripts/build)")
    cluster = None
    if args.backend == "yarn":
        def on_signal(sig, frame):
            raise KeyboardInterrupt(f"signal {sig}")
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGHUP, on_signal)
        cluster = Cluster(args.cluster_dir)
    decide, exit_, restart = [], [], []
    try:
        if cluster is not None:
            cluster.start()
        for _ in range(args.repeats):
            d, e = run("decide", args.heartbeat_ms, cluster)
            decide.append(d)
            exit_.append(e)
            restart.append(run("restart", args.heartbeat_ms, cluster)[0])
    finally:
        if cluster is not None:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_IGN)  # nothing may skip the stop
            cluster.stop()
    where = (f"; backend yarn (Hadoop 3.4.2 mini cluster, 1 NM, NM heartbeat 250 ms)"
             if cluster is not None else "")
    print(f"machine: nproc={os.cpu_count()}, load {os.getloadavg()[0]:.2f}; "
          f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; heartbeat interval "
          f"{args.heartbeat_ms} ms; {args.repeats} runs; median / max in ms{where}")
    print(f"{'from worker death to':40} {'median':>8} {'max':>8}")
    for name, values in [("the job's final decision (AM)", decide),
                         ("`tony submit` exiting", exit_),
                         ("the restarted task running", restart)]:
        # The AM's log has millisecond resolution: below 1 ms only "<1" is known.
        cells = [f"{v:8.1f}" if v >= 1 else f"{'<1':>8}" for v in (statistics.median(values),
                                                                    max(values))]
        print(f"{name:40} {cells[0]} {cells[1]}")


if __name__ == "__main__":
    main()
