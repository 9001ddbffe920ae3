#!/usr/bin/python3
"""Launch-latency benchmark on YARN: tony vs. Hadoop's DistributedShell (stdlib only).

Starts a real Hadoop 3.4.2 mini cluster (scripts/hadoop-minicluster: HDFS + one
NodeManager with 8192 MB, NM heartbeat 250 ms, and here 16 vcores, see --nm-vcores) in a
temporary directory, or uses --cluster-dir DIR, and for each task count N runs R times each, interleaved:

  tony    `tony submit --backend yarn` with N worker tasks (AM 256 MB, tasks 128 MB);
  dshell  org.apache.hadoop.yarn.applications.distributedshell.Client 3.4.2 from
          Maven Central, -num_containers N (AM 256 MB, containers 128 MB).

Every task runs one shell command that appends a CLOCK_REALTIME stamp,

  tony:   date +%s%N >> $STAMP_DIR/$JOB_NAME.$TASK_INDEX
  dshell: { date +%s%N >> $STAMP_DIR/dshell.$YARN_SHELL_ID; }

and exits, or with --sleep S then sleeps S seconds (tony runs it with /bin/sh -c,
DistributedShell with /bin/bash -c; the braces keep DistributedShell's own "1>stdout"
suffix from taking the stamp's output). The containers run on this machine, so STAMP_DIR is a local directory.
  launch = max(stamp) - t0, t0 = CLOCK_REALTIME just before the client is spawned;
  total  = the client's wall time from spawn to exit.

Where the time goes is read from the cluster's own log (minicluster.log: the
ResourceManager's and NodeManager's INFO lines, millisecond stamps) and from tony's
am.log: when the RM accepted the application, allocated the AM container, when the NM
launched it, when the AM registered, when each task container was allocated and
launched, and when the RM marked the application FINISHED.

The cluster this script started is stopped at the end (also on Ctrl-C / SIGTERM);
a cluster given with --cluster-dir that was already running is left running.
"""

import argparse
import datetime
import glob
import os
import platform
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
DEFAULT_TONY = os.path.join(ROOT, "build", "tony")
MINICLUSTER = os.path.join(ROOT, "scripts", "hadoop-minicluster")
CLASSPATH_TXT = os.path.join(ROOT, "tests", "hadoop", "minicluster", "target", "classpath.txt")
M2_REPO = os.environ.get("M2_REPO", os.path.expanduser("~/.m2/repository"))

DSHELL_CLIENT = "org.apache.hadoop.yarn.applications.distributedshell.Client"
# DistributedShell and what it needs beyond the minicluster's (shaded) classpath: the
# shaded hadoop-client-runtime carries commons-cli, commons-lang3 and jersey only
# relocated (org.apache.hadoop.shaded.*), and DistributedShell uses the plain names:
# commons-cli to parse options (Client and ApplicationMaster), commons-lang3's StringUtils,
# and jersey's ClientHandlerException, which Client.addToLocalResources references.
DSHELL_ARTIFACTS = [
    ("org.apache.hadoop", "hadoop-yarn-applications-distributedshell", "3.4.2"),
    ("commons-cli", "commons-cli", "1.9.0"),
    ("org.apache.commons", "commons-lang3", "3.17.0"),
    ("com.sun.jersey", "jersey-client", "1.19.4"),
]

TONY_CMD = "date +%s%N >> $STAMP_DIR/$JOB_NAME.$TASK_INDEX"
# DistributedShell appends "1>stdout 2>stderr" to the command, which would win over a plain
# ">>": the braces keep the stamp's own redirection (no extra process).
DSHELL_CMD = "{ date +%s%N >> $STAMP_DIR/dshell.$YARN_SHELL_ID; }"

APP_RE = re.compile(r"application_\d+_\d+")
LOG_TIME_RE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3}) ")


# ---------------------------------------------------------------- the cluster

def log_time(line):
    """Wall time (s) of a log line starting 'YYYY-mm-dd HH:MM:SS,mmm' (or .mmm), or None."""
    m = LOG_TIME_RE.match(line)
    if not m:
        return None
    return datetime.datetime.strptime(m.group(1).replace(",", "."),
                                      "%Y-%m-%d %H:%M:%S.%f").timestamp()


class Cluster:
    """A scripts/hadoop-minicluster instance: started here (and stopped) or reused."""

    def __init__(self, cluster_dir, nm_vcores, nodemanagers=1, nm_memory_mb=8192):
        self.nm_vcores = nm_vcores
        self.nodemanagers = nodemanagers
        self.nm_memory_mb = nm_memory_mb
        self.owned_tmp = cluster_dir is None
        self.dir = os.path.realpath(cluster_dir or tempfile.mkdtemp(prefix="tony-ybench-cluster-"))
        self.started = False
        self.started_here = False  # stays True after stop(), for the report

    def running(self):
        return subprocess.run([MINICLUSTER, "status", self.dir], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0

    def start(self):
        if not self.owned_tmp and self.running():
            print("using the running cluster in %s" % self.dir, flush=True)
            return
        print("starting a mini cluster in %s ..." % self.dir, flush=True)
        t = time.monotonic()
        self.started = self.started_here = True
        subprocess.run([MINICLUSTER, "start", self.dir, "--nm-vcores", str(self.nm_vcores),
                        "--nodemanagers", str(self.nodemanagers),
                        "--nm-memory-mb", str(self.nm_memory_mb)],
                       check=True, stdin=subprocess.DEVNULL)
        print("cluster ready in %.1f s" % (time.monotonic() - t), flush=True)

    def stop(self):
        if self.started:
            subprocess.run([MINICLUSTER, "stop", self.dir], stdin=subprocess.DEVNULL)
            self.started = False
        if self.owned_tmp:
            shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def log(self):
        return os.path.join(self.dir, "minicluster.log")

    def log_size(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def log_since(self, offset):
        try:
            with open(self.log, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace").splitlines()
        except OSError:
            return []

    def am_container_dir(self, app_id):
        dirs = sorted(glob.glob(os.path.join(self.dir, "data", "yarn", "*", "*", "*-logDir-nm-*",
                                             app_id, "container_*_000001")))
        return dirs[0] if dirs else None

    def pids_of_app(self, app_id):
        """Processes working in one of the application's container directories."""
        root = os.path.join(self.dir, "data", "yarn")
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                cwd = os.readlink("/proc/%s/cwd" % name)
            except OSError:
                continue
            if cwd.startswith(root) and ("/%s/" % app_id) in cwd + "/":
                found.append(int(name))
        return found


# ---------------------------------------------------------------- DistributedShell

def m2_path(group, artifact, version):
    return os.path.join(M2_REPO, group.replace(".", "/"), artifact, version,
                        "%s-%s.jar" % (artifact, version))


def fetch_dshell_jars():
    """The jars, from the local Maven repository (fetched from Maven Central if missing)."""
    jars = []
    for g, a, v in DSHELL_ARTIFACTS:
        path = m2_path(g, a, v)
        if not os.path.isfile(path):
            if not shutil.which("mvn"):
                sys.exit("mvn not found: needed once to fetch %s:%s:%s" % (g, a, v))
            print("fetching %s:%s:%s from Maven Central ..." % (g, a, v), flush=True)
            subprocess.run(["mvn", "-B", "-q", "dependency:get", "-Dtransitive=false",
                            "-Dartifact=%s:%s:%s" % (g, a, v)], check=True,
                           stdin=subprocess.DEVNULL)
        if not os.path.isfile(path):
            sys.exit("%s is still missing after mvn dependency:get" % path)
        jars.append(path)
    return jars


def dshell_conf_dir(cluster, parent):
    """The cluster's site files plus yarn.is.minicluster=true and a console log4j config.

    yarn.is.minicluster makes the DistributedShell Client put its own java.class.path on the
    AM's CLASSPATH (Client.java), since the NodeManager has no $HADOOP_COMMON_HOME/share to
    offer. The launcher leaves that key out of yarn-site.xml, so tony never sees it.
    """
    conf = os.path.join(parent, "dshell-conf")
    os.makedirs(conf, exist_ok=True)
    for name in ("core-site.xml", "hdfs-site.xml"):
        shutil.copy(os.path.join(cluster.dir, name), conf)
    with open(os.path.join(cluster.dir, "yarn-site.xml")) as f:
        text = f.read()
    text = text.replace("</configuration>",
                        "  <property><name>yarn.is.minicluster</name><value>true</value></property>\n"
                        "</configuration>")
    with open(os.path.join(conf, "yarn-site.xml"), "w") as f:
        f.write(text)
    with open(os.path.join(conf, "log4j.properties"), "w") as f:
        f.write("log4j.rootLogger=INFO,console\n"
                "log4j.appender.console=org.apache.log4j.ConsoleAppender\n"
                "log4j.appender.console.target=System.err\n"
                "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
                "log4j.appender.console.layout.ConversionPattern="
                "%d{yyyy-MM-dd HH:mm:ss,SSS} %p %c{1}: %m%n\n")
    return conf


# ---------------------------------------------------------------- one run

def with_sleep(command, sleep_s):
    return command if float(sleep_s) == 0 else "%s; sleep %s" % (command, sleep_s)


def read_stamps(stamp_dir):
    stamps = []
    for name in os.listdir(stamp_dir):
        try:
            with open(os.path.join(stamp_dir, name)) as f:
                stamps += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            pass
    return stamps


def phases(lines, app_id, t0):
    """Milliseconds after t0 of the RM's and NM's steps for app_id, from minicluster.log."""
    suffix = app_id[len("application_"):]
    am_cont = re.compile(r"container_(e\d+_)?%s_01_000001\b" % re.escape(suffix))
    any_cont = re.compile(r"container_(e\d+_)?%s_\d+_\d+" % re.escape(suffix))
    ph = {}
    alloc, launch = {}, {}  # task container id -> ms

    def at(line):
        t = log_time(line)
        return None if t is None else (t - t0) * 1000.0

    seq = int(app_id.rsplit("_", 1)[1])
    for line in lines:
        if "Allocated new applicationId: %d" % seq in line and line.rstrip().endswith(
                ": %d" % seq):
            ph.setdefault("new_app_id", at(line))
            continue
        if app_id in line and "RMAppImpl" in line:
            if "from NEW to NEW_SAVING" in line:
                ph.setdefault("submitted", at(line))
            elif "to RUNNING on event = ATTEMPT_REGISTERED" in line:
                ph.setdefault("am_registered", at(line))
            elif "on event = ATTEMPT_UNREGISTERED" in line:
                # From here on clients see FINISHED (the RM reports FINISHING as FINISHED).
                ph.setdefault("unregistered", at(line))
            continue
        m = any_cont.search(line)
        if not m:
            continue
        is_am = bool(am_cont.search(line))
        if "RMContainerImpl" in line and "from NEW to ALLOCATED" in line:
            if is_am:
                ph.setdefault("am_allocated", at(line))
            else:
                alloc.setdefault(m.group(0), at(line))
        elif "ContainerImpl" in line and "from NEW to LOCALIZING" in line and is_am:
            ph.setdefault("am_localizing", at(line))
        elif "launchContainer:" in line:
            if is_am:
                ph.setdefault("am_launched", at(line))
            else:
                launch.setdefault(m.group(0), at(line))
    # Only containers that ran a task: DistributedShell's AM can get surplus grants it releases.
    used = [alloc[c] for c in launch if alloc.get(c) is not None]
    if used:
        ph["first_task_allocated"] = min(used)
        ph["last_task_allocated"] = max(used)
    if launch:
        ph["last_task_launched"] = max(launch.values())
    return ph


# The AM's last word on its loop (application_master.cc): the longest one task held it.
LOOP_STALL_RE = re.compile(r"the loop's longest task took (\d+) ms \(([^)]*)\)")


def tony_am_phases(cluster, app_id, t0):
    """From tony's am.log, ms after t0: the AM listening, its first and last container launch,
    its decision on the job, and its exit."""
    d = cluster.am_container_dir(app_id)
    out = {}
    if not d:
        return out
    try:
        with open(os.path.join(d, "am.log"), errors="replace") as f:
            for line in f:
                t = log_time(line)
                if t is None:
                    continue
                ms = (t - t0) * 1000.0
                if "AM listening" in line:
                    out.setdefault("am_listening", ms)
                elif " launching " in line:
                    out.setdefault("am_first_launch", ms)
                    out["am_last_launch"] = ms
                elif "] job SUCCEEDED" in line or "] job FAILED" in line:
                    out.setdefault("am_job_done", ms)
                elif "AM exiting" in line:
                    out.setdefault("am_exiting", ms)
                m = LOOP_STALL_RE.search(line)
                if m:
                    # A duration, not a time after t0: kept apart from the phases' timeline.
                    out["am_loop_longest_ms"] = float(m.group(1))
                    out["am_loop_longest_task"] = m.group(2)
    except OSError:
        pass
    return out


def run_one(ctx, kind, n):
    tmp = tempfile.mkdtemp(prefix="tony-ybench-%s-" % kind)
    stamps = os.path.join(tmp, "stamps")
    os.makedirs(stamps)
    if kind == "tony":
        env = dict(os.environ, HADOOP_CONF_DIR=ctx.cluster.dir, TONY_HOME=os.path.join(tmp, "home"))
        cmd = [ctx.args.tony, "submit", "--backend", "yarn",
               "--conf", "tony.containers.command=" + with_sleep(TONY_CMD, ctx.args.sleep),
               "--conf", "tony.worker.instances=%d" % n,
               "--conf", "tony.worker.memory=128m",
               "--conf", "tony.am.memory=256m",
               "--conf", "tony.execution.envs=STAMP_DIR=" + stamps]
    else:
        env = dict(os.environ)
        env.pop("HADOOP_CONF_DIR", None)
        cmd = ["java", "-cp", ctx.dshell_cp, DSHELL_CLIENT, "-jar", ctx.dshell_jar,
               "-shell_command", with_sleep(DSHELL_CMD, ctx.args.sleep), "-shell_env", "STAMP_DIR=" + stamps,
               "-num_containers", str(n), "-container_memory", "128", "-master_memory", "256",
               "-timeout", str(int(ctx.args.timeout * 1000))]
    res = {"ok": False, "kind": kind, "n": n}
    out_lines = []
    log_offset = ctx.cluster.log_size()
    popen = None
    try:
        t0_ns = time.time_ns()
        m0 = time.monotonic_ns()
        popen = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        reader = threading.Thread(target=lambda: out_lines.extend(
            popen.stdout.read().decode(errors="replace").splitlines()), daemon=True)
        reader.start()
        try:
            rc = popen.wait(timeout=ctx.args.timeout + 30)
        except subprocess.TimeoutExpired:
            rc = None
        m1 = time.monotonic_ns()
        if rc is None:  # tony kills its job on SIGINT; DistributedShell's -timeout kills it too
            os.killpg(popen.pid, signal.SIGINT)
            try:
                popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(popen.pid, signal.SIGKILL)
                popen.wait()
        reader.join(timeout=10)
        text = "\n".join(out_lines)
        m = APP_RE.search(text)
        app_id = m.group(0) if m else None
        st = read_stamps(stamps)
        t0 = t0_ns / 1e9
        res.update(rc=rc, app_id=app_id, total_ms=(m1 - m0) / 1e6, stamps=len(st))
        if app_id:
            time.sleep(0.5)  # let the cluster's log catch up with the last lines
            res["phases"] = phases(ctx.cluster.log_since(log_offset), app_id, t0)
            if kind == "tony":
                res["phases"].update(tony_am_phases(ctx.cluster, app_id, t0))
        if rc == 0 and len(st) == n:
            res["ok"] = True
            res["launch_ms"] = (max(st) - t0_ns) / 1e6
            res["first_ms"] = (min(st) - t0_ns) / 1e6
        else:
            res["error"] = "rc=%s stamps=%d/%d\n%s" % (rc, len(st), n, text[-3000:])
        if app_id:
            # The NodeManager reaps a finished application's containers; anything still working
            # in one of its directories after a grace period is reported and killed.
            deadline = time.monotonic() + 5
            while ctx.cluster.pids_of_app(app_id) and time.monotonic() < deadline:
                time.sleep(0.1)
            left = ctx.cluster.pids_of_app(app_id)
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if left:
                sys.stderr.write("warning: %s N=%d (%s) left %d process(es), killed\n"
                                 % (kind, n, app_id, len(left)))
            res["leftovers"] = len(left)
    finally:
        if popen is not None and popen.poll() is None:
            os.killpg(popen.pid, signal.SIGKILL)
            popen.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return res


# ---------------------------------------------------------------- report

def med_min(values):
    if not values:
        return "-"
    return "%.0f/%.0f" % (statistics.median(values), min(values))


def med(values):
    return "%.0f" % statistics.median(values) if values else "-"


def machine_line(cluster):
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = open("/proc/loadavg").read().split()[:3]
    java = subprocess.run(["java", "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True).stdout.splitlines()
    return ("machine: nproc=%d, %s, kernel %s, python %s, %s, load avg %s; %s; Hadoop 3.4.2 "
            "mini cluster (%s NM, %s MB, %s vcores each, NM heartbeat 250 ms) in %s"
            % (os.cpu_count() or 0, model, platform.release(), platform.python_version(),
               java[0] if java else "java ?", " ".join(load),
               datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
               cluster.nodemanagers if cluster.started_here else "?",
               cluster.nm_memory_mb if cluster.started_here else "?",
               cluster.nm_vcores if cluster.started_here else "?", cluster.dir))


PHASES = [
    ("new_app_id", "client got an application id from the RM"),
    ("submitted", "RM got the application (after staging)"),
    ("am_allocated", "AM container allocated"),
    ("am_launched", "AM container launched (NM, after localization)"),
    ("am_listening", "AM listening (tony am.log)"),
    ("am_registered", "AM registered with the RM"),
    ("first_task_allocated", "first task container allocated"),
    ("last_task_allocated", "last task container allocated"),
    ("last_task_launched", "last task container launched (NM)"),
    ("launch", "last task's stamp (launch)"),
    ("am_job_done", "AM: job SUCCEEDED (tony am.log)"),
    ("am_exiting", "AM exiting (tony am.log)"),
    ("unregistered", "AM unregistered (clients now see FINISHED)"),
    ("total", "client exited (total)"),
]


def phase_values(runs, key):
    vals = []
    for r in runs:
        if not r["ok"]:
            continue
        if key == "launch":
            vals.append(r["launch_ms"])
        elif key == "total":
            vals.append(r["total_ms"])
        elif r.get("phases", {}).get(key) is not None:
            vals.append(r["phases"][key])
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="1,4,8", help="comma-separated task counts (default 1,4,8)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per launcher and task count (default 3)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed N=1 runs of each launcher first (default 1)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    ap.add_argument("--sleep", default="0",
                    help="seconds each task sleeps after its stamp (default 0). DistributedShell's "
                         "tasks that end early make the NodeManager send out-of-band heartbeats, "
                         "which get DistributedShell's later containers allocated sooner; a sleep "
                         "longer than the allocation phase (e.g. 3) removes that effect")
    ap.add_argument("--cluster-dir", help="use (or start and stop) the mini cluster in this directory")
    ap.add_argument("--nm-vcores", type=int, default=16,
                    help="vcores of the NodeManager of a cluster this script starts (default 16: "
                         "tony's gang of N tasks needs N + 1 vcores at once, with its AM)")
    ap.add_argument("--nodemanagers", type=int, default=1,
                    help="NodeManagers of a cluster this script starts (default 1)")
    ap.add_argument("--nm-memory-mb", type=int, default=8192,
                    help="memory of each NodeManager of a cluster this script starts (default 8192)")
    ap.add_argument("--tony", default=DEFAULT_TONY, help="tony binary (default: build/tony)")
    ap.add_argument("--no-dshell", action="store_true", help="skip DistributedShell")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run")
    args = ap.parse_args()
    tasks = [int(x) for x in args.tasks.split(",") if x.strip()]
    if not os.access(args.tony, os.X_OK):
        sys.exit("tony binary not found at %s (build it first)" % args.tony)

    class Ctx:
        pass
    ctx = Ctx()
    ctx.args = args
    kinds = ["tony"] if args.no_dshell else ["tony", "dshell"]
    if "dshell" in kinds:
        jars = fetch_dshell_jars()
        ctx.dshell_jar = jars[0]

    # SIGTERM / SIGHUP unwind like Ctrl-C, so the cluster is always stopped.
    def on_signal(sig, frame):
        raise KeyboardInterrupt("signal %d" % sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    ctx.cluster = Cluster(args.cluster_dir, args.nm_vcores, args.nodemanagers, args.nm_memory_mb)
    scratch = tempfile.mkdtemp(prefix="tony-ybench-")
    results = {n: {k: [] for k in kinds} for n in tasks}
    failures = 0
    try:
        ctx.cluster.start()
        if "dshell" in kinds:
            with open(CLASSPATH_TXT) as f:
                mini_cp = f.read().strip()
            ctx.dshell_cp = ":".join([dshell_conf_dir(ctx.cluster, scratch)] + jars + [mini_cp])
        for _ in range(args.warmup):
            for kind in kinds:
                res = run_one(ctx, kind, 1)
                if args.verbose:
                    print("warm-up %-6s: ok=%s launch=%s total=%.0f" % (
                        kind, res["ok"], res.get("launch_ms"), res["total_ms"]), flush=True)
        for n in tasks:
            for r in range(args.repeats):
                for kind in kinds:
                    res = run_one(ctx, kind, n)
                    results[n][kind].append(res)
                    if not res["ok"]:
                        failures += 1
                        sys.stderr.write("%s N=%d run %d failed: %s\n" % (kind, n, r, res.get("error")))
                    if args.verbose:
                        print("%-6s N=%-2d run %d: %s launch=%s total=%.0f phases=%s" % (
                            kind, n, r, res.get("app_id"),
                            "%.0f" % res["launch_ms"] if res["ok"] else "-", res["total_ms"],
                            {k: round(v) for k, v in res.get("phases", {}).items()
                             if isinstance(v, (int, float))}), flush=True)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C must not skip the stop
        ctx.cluster.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    print()
    print(machine_line(ctx.cluster))
    print("launch = last task's `date` stamp - t0 just before spawning the client; total = the "
          "client's spawn to exit (tasks sleep %s s after the stamp). ms, median/min over %d runs "
          "(ratio: of the medians)." % (args.sleep, args.repeats))
    hdr = ("%-5s  %-15s  %-24s  %-6s  %-13s  %-22s"
           % ("tasks", "tony launch ms", "DistributedShell launch", "ratio", "tony total ms",
              "DistributedShell total"))
    print(hdr)
    print("-" * len(hdr))
    for n in tasks:
        tl = phase_values(results[n]["tony"], "launch")
        tt = phase_values(results[n]["tony"], "total")
        dl = phase_values(results[n].get("dshell", []), "launch")
        dt = phase_values(results[n].get("dshell", []), "total")
        ratio = "%.2f" % (statistics.median(tl) / statistics.median(dl)) if tl and dl else "-"
        print("%-5d  %-15s  %-24s  %-6s  %-13s  %-22s"
              % (n, med_min(tl), med_min(dl) if dl else "-", ratio, med_min(tt),
                 med_min(dt) if dt else "-"))

    n = tasks[-1]
    print()
    print("where the time goes at N=%d: ms after t0, median over the runs (RM/NM lines from "
          "minicluster.log)" % n)
    hdr = "%-50s  %8s  %8s" % ("step", "tony", "dshell")
    print(hdr)
    print("-" * len(hdr))
    for key, label in PHASES:
        tv = med(phase_values(results[n]["tony"], key))
        dv = med(phase_values(results[n].get("dshell", []), key)) if "dshell" in kinds else "-"
        if key.startswith("am_") and key not in ("am_allocated", "am_launched", "am_registered"):
            dv = "-"  # tony's am.log only
        print("%-50s  %8s  %8s" % (label, tv, dv))
    gaps = {}
    for kind in kinds:
        g = [(r["phases"]["last_task_allocated"] - r["phases"]["first_task_allocated"]) / (n - 1)
             for r in results[n][kind] if r["ok"] and n > 1
             and r.get("phases", {}).get("last_task_allocated") is not None
             and r["phases"].get("first_task_allocated") is not None]
        gaps[kind] = med(g)
    print("%-50s  %8s  %8s" % ("mean gap between task container allocations", gaps["tony"],
                               gaps.get("dshell", "-")))
    stalls = [r["phases"]["am_loop_longest_ms"] for r in results[n]["tony"]
              if r.get("phases", {}).get("am_loop_longest_ms") is not None]
    if stalls:
        worst = max((r for r in results[n]["tony"]
                     if r.get("phases", {}).get("am_loop_longest_ms") is not None),
                    key=lambda r: r["phases"]["am_loop_longest_ms"])
        print("tony AM's loop, longest one task held it: median %.0f ms, max %.0f ms (%s)"
              % (statistics.median(stalls), max(stalls), worst["phases"]["am_loop_longest_task"]))
    leftovers = sum(r.get("leftovers", 0) for rows in results.values() for k in rows.values()
                    for r in k)
    print("failed runs: %d; leftover container processes killed after runs: %d"
          % (failures, leftovers))
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
