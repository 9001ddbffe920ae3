"""The Python API over the `tony` binary: jobs built from tony's keys and flags, submitted and
followed through `tony submit --output json`, and looked at through `tony status`, `tony logs`,
`tony kill` and `tony list` (with `--output json` where they print a job)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

ConfValue = Union[str, int, float, bool]


class TonyError(Exception):
    """A tony command failed: `exit_code` is its exit code (2: bad input, nothing started; 1: the
    job or the cluster failed), `stderr` what it printed."""

    def __init__(self, message: str, exit_code: Optional[int] = None, stderr: str = ""):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


def tony_binary() -> str:
    """The tony binary: $TONY_BIN, else `tony` on PATH."""
    path = os.environ.get("TONY_BIN") or shutil.which("tony")
    if not path:
        raise TonyError("the tony binary is not on PATH; set TONY_BIN to it")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise TonyError(f"TONY_BIN={path} is not an executable file")
    return path


@dataclass(frozen=True)
class Task:
    """One task of a job, as `tony status` shows it."""

    name: str  # "worker:0"
    type: str
    index: int
    state: str  # NEW, REQUESTED, ALLOCATED, REGISTERED, RUNNING, SUCCEEDED, FAILED, KILLED, ...
    exit_code: Optional[int]  # None while it runs or if it never ran
    attempt: int  # 0 for the first
    host: str
    port: int
    log_dir: str
    start_ms: int
    end_ms: int
    peak_rss_bytes: int
    diagnostics: str
    progress: Optional[Dict[str, Any]]  # {"step", "total", "metrics"} once it reports one
    role: str = ""
    container_id: str = ""
    previous_attempts: List[Dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Task":
        return cls(name=d.get("task", f"{d.get('type', '')}:{d.get('index', 0)}"),
                   type=d.get("type", ""), index=int(d.get("index", 0)),
                   state=d.get("state", ""), exit_code=d.get("exit_code"),
                   attempt=int(d.get("attempt", 0)), host=d.get("host", ""),
                   port=int(d.get("port", 0)), log_dir=d.get("log_dir", ""),
                   start_ms=int(d.get("start_ms", 0)), end_ms=int(d.get("end_ms", 0)),
                   peak_rss_bytes=int(d.get("peak_rss_bytes", 0)),
                   diagnostics=d.get("diagnostics", ""), progress=d.get("progress"),
                   role=d.get("role", ""), container_id=d.get("container_id", ""),
                   previous_attempts=list(d.get("previous_attempts", [])))


@dataclass(frozen=True)
class JobStatus:
    """A job's state and tasks. `state` is RUNNING, SUCCEEDED, FAILED or KILLED (UNKNOWN before
    its AM says); `complete` once nothing will change any more."""

    app_id: str
    state: str
    complete: bool
    diagnostics: str
    start_ms: int
    end_ms: int
    output_dir: str  # where the tasks' outputs stay (TONY_OUTPUT_DIR's destination)
    tensorboard_url: str
    tasks: List[Task]
    # The backend's report, where it was asked (tony status): its state of the application,
    # the final status it recorded, the tracking URL.
    backend_state: str = ""
    final_status: str = ""
    tracking_url: str = ""
    name: str = ""
    user: str = ""
    # `tony submit`'s exit code, for a job this process submitted and waited for.
    exit_code: Optional[int] = None

    @property
    def succeeded(self) -> bool:
        return self.state == "SUCCEEDED"

    def task(self, name: str) -> Task:
        """The task "type:index"."""
        for t in self.tasks:
            if t.name == name:
                return t
        raise KeyError(name)

    @classmethod
    def from_json(cls, d: Mapping[str, Any], exit_code: Optional[int] = None) -> "JobStatus":
        return cls(app_id=d.get("app_id", ""), state=d.get("state", "UNKNOWN"),
                   complete=bool(d.get("complete", False)),
                   diagnostics=d.get("diagnostics", ""), start_ms=int(d.get("start_ms", 0)),
                   end_ms=int(d.get("end_ms", 0)), output_dir=d.get("output_dir", ""),
                   tensorboard_url=d.get("tensorboard_url", ""),
                   tasks=[Task.from_json(t) for t in d.get("tasks", [])],
                   backend_state=d.get("backend_state", ""),
                   final_status=d.get("final_status", ""),
                   tracking_url=d.get("tracking_url", ""), name=d.get("name", ""),
                   user=d.get("user", ""), exit_code=exit_code)


@dataclass(frozen=True)
class JobInfo:
    """A job as `tony list` shows it."""

    app_id: str
    name: str
    user: str
    backend_state: str  # SUBMITTED, RUNNING, FINISHED, FAILED, KILLED
    final_status: str  # "" while it runs
    tracking_url: str

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "JobInfo":
        return cls(app_id=d.get("app_id", ""), name=d.get("name", ""), user=d.get("user", ""),
                   backend_state=d.get("backend_state", ""),
                   final_status=d.get("final_status", ""),
                   tracking_url=d.get("tracking_url", ""))


def _conf_text(value: ConfValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _error_of(stderr: str, code: int, what: str) -> TonyError:
    """The one error line tony printed ("tony: error: ..."), or its last line."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("tony: error: ")]
    message = errors[-1][len("tony: error: "):] if errors else (
        lines[-1] if lines else f"{what} exited with {code}")
    return TonyError(message, exit_code=code, stderr=stderr)


class _Tony:
    """Runs tony commands with a job's backend, --conf values and environment."""

    def __init__(self, backend: Optional[str] = None, conf: Optional[Mapping[str, ConfValue]] = None,
                 env: Optional[Mapping[str, str]] = None):
        self.backend = backend
        self.conf = dict(conf or {})
        self.env = dict(env or {})

    def environ(self) -> Dict[str, str]:
        environ = dict(os.environ)
        environ.update(self.env)
        return environ

    def where(self) -> List[str]:
        args = ["--backend", self.backend] if self.backend else []
        for key, value in self.conf.items():
            args += ["--conf", f"{key}={_conf_text(value)}"]
        return args

    def run(self, args: Sequence[str], timeout: Optional[float] = 120) -> str:
        argv = [tony_binary(), *args]
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              env=self.environ(), timeout=timeout, check=False)
        if done.returncode != 0:
            raise _error_of(done.stderr, done.returncode, " ".join(argv[:2]))
        return done.stdout


class Run:
    """A submitted job: the `tony submit` this process started (Job.submit), or one attached to
    by its application id (attach)."""

    def __init__(self, app_id: str, tony: _Tony, process: Optional[subprocess.Popen] = None,
                 job_dir: str = "", output_dir: str = "", backend: str = ""):
        self.app_id = app_id
        self.job_dir = job_dir
        self.output_dir = output_dir
        self.backend = backend or tony.backend or ""
        self._tony = tony
        self._process = process
        self._ended: Optional[Dict[str, Any]] = None
        self._lines: List[str] = []
        self._readers: List[threading.Thread] = []
        self._detached_output = None  # a detached submit's file, read on wait()
        self._pending = ""

    # What Job.submit's reader threads call.
    def _on_event(self, event: Dict[str, Any]) -> None:
        if event.get("event") == "submitted":
            self.app_id = event.get("app_id", "")
            self.job_dir = event.get("job_dir", "")
            self.output_dir = event.get("output_dir", "")
            self.backend = event.get("backend", "")
        elif event.get("event") == "ended":
            self._ended = event

    # A line of a detached `tony submit`'s file: its JSON events and its lines for people mixed.
    def _take_line(self, line: str) -> None:
        if line.startswith("{"):
            try:
                self._on_event(json.loads(line))
                return
            except ValueError:
                pass
        if line:
            self._lines.append(line)

    @property
    def output(self) -> str:
        """What `tony submit` printed for people (its progress lines and summary) so far."""
        return "".join(self._lines)

    def done(self) -> bool:
        if self._process is not None:
            return self._process.poll() is not None
        return self.status().complete

    def wait(self, timeout: Optional[float] = None, poll_interval: float = 1.0) -> JobStatus:
        """Waits for the job's end and returns its final status; TimeoutError after `timeout`
        seconds (the job goes on)."""
        if self._process is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                status = self.status()
                if status.complete:
                    return status
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"{self.app_id} still runs after {timeout} s")
                time.sleep(poll_interval)
        try:
            code = self._process.wait(timeout)
        except subprocess.TimeoutExpired as e:
            raise TimeoutError(f"{self.app_id} still runs after {timeout} s") from e
        for reader in self._readers:
            reader.join()
        if self._detached_output is not None:
            rest = self._pending + self._detached_output.read()
            self._pending = ""
            for line in rest.split("\n"):
                self._take_line(line + "\n" if line else "")
        if self._ended is None:
            raise _error_of(self.output, code, "tony submit")
        return JobStatus.from_json(self._ended.get("job", {}), exit_code=code)

    def status(self) -> JobStatus:
        """The job's status now (`tony status --output json`)."""
        text = self._tony.run(["status", self.app_id, "--output", "json", *self._tony.where()])
        return JobStatus.from_json(json.loads(text))

    def logs(self, task: Optional[str] = None, stream: str = "stdout") -> str:
        """What the job's tasks printed (`tony logs`): one task's ("worker:0") or all of them;
        stream "stdout", "stderr" or "all"."""
        args = ["logs", self.app_id]
        if task:
            args += ["--task", task]
        if stream == "stderr":
            args.append("--stderr")
        elif stream == "all":
            args.append("--all")
        elif stream != "stdout":
            raise ValueError(f"stream must be stdout, stderr or all, not {stream!r}")
        return self._tony.run([*args, *self._tony.where()])

    def kill(self) -> None:
        """Stops the job (`tony kill`): its tasks get their grace period, and it ends KILLED."""
        self._tony.run(["kill", self.app_id, *self._tony.where()], timeout=None)

    def __repr__(self) -> str:
        return f"Run({self.app_id!r}, backend={self.backend!r})"


class Job:
    """A job as `tony submit` takes it: TonY's flags, tony's configuration keys (`conf`), and
    shorthands for the common keys (instances={"worker": 2} is tony.worker.instances=2)."""

    def __init__(self, executes: Optional[str] = None, *, task_params: Optional[str] = None,
                 src_dir: Optional[str] = None, python_binary_path: Optional[str] = None,
                 python_venv: Optional[str] = None, framework: Optional[str] = None,
                 name: Optional[str] = None, backend: Optional[str] = None,
                 instances: Optional[Mapping[str, int]] = None,
                 memory: Optional[Mapping[str, str]] = None,
                 vcores: Optional[Mapping[str, int]] = None,
                 gpus: Optional[Mapping[str, int]] = None,
                 conf: Optional[Mapping[str, ConfValue]] = None, conf_file: Optional[str] = None,
                 shell_env: Optional[Mapping[str, str]] = None,
                 container_env: Optional[Mapping[str, str]] = None,
                 output_dir: Optional[str] = None, hdfs_classpath: Optional[str] = None,
                 env: Optional[Mapping[str, str]] = None):
        self.executes = executes
        self.task_params = task_params
        self.src_dir = src_dir
        self.python_binary_path = python_binary_path
        self.python_venv = python_venv
        self.backend = backend
        self.conf_file = conf_file
        self.shell_env = dict(shell_env or {})
        self.container_env = dict(container_env or {})
        self.output_dir = output_dir
        self.hdfs_classpath = hdfs_classpath
        self.env = dict(env or {})  # the tony process's environment (HADOOP_CONF_DIR, TONY_HOME)
        self.conf: Dict[str, ConfValue] = {}
        if framework:
            self.conf["tony.application.framework"] = framework
        if name:
            self.conf["tony.application.name"] = name
        for attribute, values in (("instances", instances), ("memory", memory),
                                  ("vcores", vcores), ("gpus", gpus)):
            for job_type, value in (values or {}).items():
                self.conf[f"tony.{job_type}.{attribute}"] = value
        self.conf.update(conf or {})

    def submit_args(self) -> List[str]:
        """The arguments of `tony submit` for this job."""
        args: List[str] = []
        for flag, value in (("--executes", self.executes), ("--task_params", self.task_params),
                            ("--src_dir", self.src_dir),
                            ("--python_binary_path", self.python_binary_path),
                            ("--python_venv", self.python_venv), ("--conf_file", self.conf_file),
                            ("--backend", self.backend), ("--output_dir", self.output_dir),
                            ("--hdfs_classpath", self.hdfs_classpath)):
            if value is not None:
                args += [flag, str(value)]
        for key, value in self.shell_env.items():
            args += ["--shell_env", f"{key}={value}"]
        for key, value in self.container_env.items():
            args += ["--container_env", f"{key}={value}"]
        for key, value in self.conf.items():
            args += ["--conf", f"{key}={_conf_text(value)}"]
        return args

    def submit(self, echo: bool = False, detach: bool = False) -> Run:
        """Starts `tony submit` and returns once the job is submitted; TonyError if it is not
        (bad input: exit_code 2, nothing started). The job runs on when this process is
        interrupted (`tony submit` runs in a session of its own): stop it with Run.kill().
        `echo` copies tony's progress lines to this process's stderr as they come. `detach`
        lets the job outlive this process too (torchx's CLI exits once a job is submitted):
        `tony submit` then writes to a file of its own rather than to pipes."""
        tony = _Tony(self.backend, env=self.env)
        argv = [tony_binary(), "submit", "--output", "json", *self.submit_args()]
        if detach:
            return self._submit_detached(tony, argv)
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=tony.environ(),
                                   start_new_session=True)
        run = Run("", tony, process)
        submitted = threading.Event()

        def read_events() -> None:
            for line in process.stdout:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                run._on_event(event)
                if run.app_id:
                    submitted.set()
            submitted.set()

        def read_lines() -> None:
            for line in process.stderr:
                run._lines.append(line)
                if echo:
                    sys.stderr.write(line)
                    sys.stderr.flush()

        for target in (read_events, read_lines):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            run._readers.append(thread)
        submitted.wait()
        if not run.app_id:
            code = process.wait()
            for reader in run._readers:
                reader.join()
            raise _error_of(run.output, code, "tony submit")
        return run

    def _submit_detached(self, tony: _Tony, argv: List[str]) -> Run:
        # A private file (mkstemp: 0600), unlinked at once: tony writes on into it, this process
        # reads it through its own descriptor, and nothing is left behind.
        fd, path = tempfile.mkstemp(prefix="tony-submit-", suffix=".log")
        try:
            reader = open(path, encoding="utf-8", errors="replace")
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
                                       env=tony.environ(), start_new_session=True)
        finally:
            os.close(fd)
            os.unlink(path)
        run = Run("", tony, process)
        run._detached_output = reader
        pending = ""
        while not run.app_id:
            chunk = reader.read()
            if chunk:
                pending += chunk
                *lines, pending = pending.split("\n")
                for line in lines:
                    run._take_line(line + "\n")
                continue
            if process.poll() is not None:
                for line in (pending + reader.read()).split("\n"):
                    run._take_line(line + "\n" if line else "")
                pending = ""
                if not run.app_id:
                    raise _error_of(run.output, process.returncode, "tony submit")
                break
            time.sleep(0.05)  # tony has written nothing more yet
        run._pending = pending
        return run

    def run(self, echo: bool = False, timeout: Optional[float] = None) -> JobStatus:
        """Submits the job and waits for its end."""
        return self.submit(echo=echo).wait(timeout)


def attach(app_id: str, backend: Optional[str] = None,
           conf: Optional[Mapping[str, ConfValue]] = None,
           env: Optional[Mapping[str, str]] = None) -> Run:
    """A job submitted before (by this machine, or with `backend` and `conf` naming its cluster)."""
    return Run(app_id, _Tony(backend, conf, env))


def list_jobs(all: bool = False, backend: Optional[str] = None,
              conf: Optional[Mapping[str, ConfValue]] = None,
              env: Optional[Mapping[str, str]] = None) -> List[JobInfo]:
    """The backend's tony jobs (`tony list`): those running, or with `all` the ended ones too."""
    tony = _Tony(backend, conf, env)
    args = ["list", "--output", "json", *(["--all"] if all else []), *tony.where()]
    return [JobInfo.from_json(d) for d in json.loads(tony.run(args))]
