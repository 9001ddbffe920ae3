#!/usr/bin/python3
"""How fast tony reacts to a dead worker on the local backend.

For each repeat, runs a 2-worker job whose tasks sleep, kills worker:1's user process with
SIGKILL at t0, and measures from t0:
  decide  - with tony.application.fail-on-worker-failure-enabled: until the AM decided the job
            FAILED (the AM's log line), and until `tony submit` exited;
  restart - with tony.worker.max-restarts=1 and restart-backoff-ms=0: until the new attempt of
            worker:1 started its user process (it writes a time stamp).
The heartbeat interval is printed next to them: the target is a decision within one interval,
since the backend sees the container's exit at once.
"""

import argparse
import datetime
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TONY = os.path.join(ROOT, "build", "tony")


def find_user_process(home, index, attempt="0"):
    """The pid of worker:<index>'s sleeping user process, or None."""
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
        if (env.get(b"TONY_HOME") == home.encode() and env.get(b"JOB_NAME") == b"worker"
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


def am_log_time(job_dir, text):
    """Wall time of the first AM log line containing text."""
    with open(os.path.join(job_dir, "am.log")) as f:
        for line in f:
            if text in line:
                stamp = " ".join(line.split()[:2])
                return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").timestamp()
    return None


def run(mode, heartbeat_ms):
    home = tempfile.mkdtemp(prefix="tony-fbench-")
    stamps = tempfile.mkdtemp(prefix="tony-fbench-stamps-")
    conf = ["tony.worker.instances=2", "tony.worker.memory=64m", "tony.local.vcores=8",
            f"tony.task.heartbeat-interval-ms={heartbeat_ms}", "tony.task.stop-grace-ms=1000",
            f"tony.execution.envs=STAMPS={stamps}"]
    if mode == "decide":
        conf.append("tony.application.fail-on-worker-failure-enabled=true")
    else:
        conf += ["tony.worker.max-restarts=1", "tony.worker.restart-backoff-ms=0"]
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


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    args = parser.parse_args()
    if not os.access(TONY, os.X_OK):
        sys.exit(f"{TONY} not found: build tony first (scripts/build)")
    decide, exit_, restart = [], [], []
    for _ in range(args.repeats):
        d, e = run("decide", args.heartbeat_ms)
        decide.append(d)
        exit_.append(e)
        restart.append(run("restart", args.heartbeat_ms)[0])
    print(f"machine: nproc={os.cpu_count()}, load {os.getloadavg()[0]:.2f}; "
          f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; heartbeat interval "
          f"{args.heartbeat_ms} ms; {args.repeats} runs; median / max in ms")
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
