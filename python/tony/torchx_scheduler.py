"""A torchx scheduler named `tony`: `torchx run -s tony dist.ddp -j 2x1 --script train.py` runs
the app as a tony job, on the local backend (`-cfg backend=local`, the default) or on YARN
(`-cfg backend=yarn`), and `torchx status`, `log` and `cancel` work on it.

How an AppDef becomes a tony job:
- each role is a job type (an app of one role, such as dist.ddp's, is tony's `worker` type, so
  that tony's pytorch framework gives its replicas RANK, WORLD_SIZE, MASTER_ADDR and
  MASTER_PORT); num_replicas is its instances, the role's resource its memory, vcores and GPUs,
  max_retries its tony.<type>.max-restarts; the role's env goes before its command, so that
  each type's tasks get their own;
- torchx's macros: app_id is the job's JOB_ID, replica_id the task's TASK_INDEX, rank 0's host
  MASTER_ADDR; torchrun's c10d rendezvous endpoint, which dist.ddp puts on a fixed port of rank
  0's host (port_map's c10d), is rank 0's own MASTER_PORT, which tony reserved for it;
- the job ships `src_dir` (default: the directory torchx runs in) to every task, where the
  role's script is found; images are not used.
Run options (-cfg): backend, src_dir, conf_file (a tony.xml for any other key), python_venv,
queue.
"""

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional

from torchx.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    filter_regex,
)
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    ReplicaStatus,
    Role,
    RoleStatus,
    macros,
    runopts,
)

import tony
from tony._job import _Tony

_STATES = {
    "RUNNING": AppState.RUNNING,
    "SUCCEEDED": AppState.SUCCEEDED,
    "FAILED": AppState.FAILED,
    "KILLED": AppState.CANCELLED,
}
_BACKEND_STATES = {
    "SUBMITTED": AppState.SUBMITTED,
    "RUNNING": AppState.RUNNING,
    "FINISHED": AppState.SUCCEEDED,
    "FAILED": AppState.FAILED,
    "KILLED": AppState.CANCELLED,
}
_TASK_STATES = {
    "NEW": AppState.PENDING,
    "REQUESTED": AppState.PENDING,
    "ALLOCATED": AppState.PENDING,
    "REGISTERED": AppState.PENDING,
    "RUNNING": AppState.RUNNING,
    "SUCCEEDED": AppState.SUCCEEDED,
    "FAILED": AppState.FAILED,
    "KILLED": AppState.CANCELLED,
}


@dataclass
class TonyJobRequest:
    """What schedule() submits: the tony job, and its roles by job type."""

    job: tony.Job
    types: Dict[str, str]  # job type -> torchx role

    def __repr__(self) -> str:
        return shlex.join(["tony", "submit", *self.job.submit_args()])


def _job_type(role_name: str) -> str:
    name = re.sub(r"[^a-z0-9_-]", "-", role_name.lower()).strip("-")
    return name or "worker"


def _shell_word(value: str) -> str:
    """`value` quoted for sh, but for the variables torchx's macros became, which sh expands."""
    for variable in ("${JOB_ID}", "${TASK_INDEX}"):
        value = value.replace(variable, "\0" + variable + "\0")
    parts = [part for part in value.split("\0") if part]
    return "".join(f'"{part}"' if part in ("${JOB_ID}", "${TASK_INDEX}") else shlex.quote(part)
                   for part in parts) or "''"


def _command(role, port: Optional[int]) -> str:
    """The role's command for tony's sh: its environment (with the macros expanded per task),
    then its entrypoint and arguments."""
    values = macros.Values(img_root=".", app_id="${JOB_ID}", replica_id="${TASK_INDEX}",
                           rank0_env="MASTER_ADDR")
    role = values.apply(role)
    args = list(role.args)
    if port is not None:
        # torchrun's c10d store on rank 0's host: at the port tony reserved for rank 0.
        endpoint = re.compile(r"(--rdzv[_-]endpoint(?:[ =]|\s+)\S*?):" + str(port) + r"\b")
        args = [endpoint.sub(r"\1:${MASTER_PORT}", arg) for arg in args]
    # torchrun's agent copies its workers' output (--tee) through Python's buffered stdout:
    # unbuffered, `torchx log` shows a running job's lines as they come.
    environment = {"PYTHONUNBUFFERED": "1", **role.env}
    env = [f"{key}={_shell_word(value)}" for key, value in environment.items()
           if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key)]
    return " ".join([*env, shlex.join([role.entrypoint, *args])])


class TonyScheduler(Scheduler[Mapping[str, CfgVal]]):
    def __init__(self, session_name: str, **_: Any) -> None:
        super().__init__("tony", session_name)

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("backend", type_=str, default="local", help="where tony runs the job: local or yarn")
        opts.add("src_dir", type_=str, default=".",
                 help="directory shipped to every task, where the role's script is")
        opts.add("conf_file", type_=str, default=None,
                 help="a tony configuration file (tony.xml) for the job's other keys")
        opts.add("python_venv", type_=str, default=None,
                 help="a zipped virtualenv unpacked into every task's ./venv")
        opts.add("queue", type_=str, default=None, help="the YARN queue")
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo:
        conf: Dict[str, Any] = {"tony.application.framework": "pytorch",
                                "tony.application.name": app.name or "torchx"}
        types: Dict[str, str] = {}
        for role in app.roles:
            job_type = "worker" if len(app.roles) == 1 else _job_type(role.name)
            if job_type in types:
                raise ValueError(f"roles {types[job_type]} and {role.name} are both tony job "
                                 f"type {job_type}")
            types[job_type] = role.name
            resource = role.resource
            conf[f"tony.{job_type}.instances"] = role.num_replicas
            if resource.memMB > 0:
                conf[f"tony.{job_type}.memory"] = f"{resource.memMB}m"
            if resource.cpu > 0:
                conf[f"tony.{job_type}.vcores"] = resource.cpu
            if resource.gpu > 0:
                conf[f"tony.{job_type}.gpus"] = resource.gpu
            if role.max_retries > 0:
                conf[f"tony.{job_type}.max-restarts"] = role.max_retries
            conf[f"tony.{job_type}.command"] = _command(role, role.port_map.get("c10d"))
        if cfg.get("queue"):
            conf["tony.yarn.queue"] = cfg["queue"]
        job = tony.Job(src_dir=str(cfg.get("src_dir") or "."), backend=str(cfg.get("backend")),
                       python_venv=cfg.get("python_venv"), conf_file=cfg.get("conf_file"),
                       conf=conf)
        return AppDryRunInfo(TonyJobRequest(job, types), repr)

    def schedule(self, dryrun_info: AppDryRunInfo) -> str:
        request: TonyJobRequest = dryrun_info.request
        return request.job.submit(detach=True).app_id

    def _status(self, app_id: str) -> Optional[tony.JobStatus]:
        try:
            return tony.attach(app_id).status()
        except tony.TonyError as e:
            if e.exit_code == 2:  # no such application
                return None
            raise

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        status = self._status(app_id)
        if status is None:
            return None
        state = _STATES.get(status.state)
        if state is None:
            state = _BACKEND_STATES.get(status.backend_state, AppState.UNKNOWN)
        roles: Dict[str, List[ReplicaStatus]] = {}
        restarts = 0
        for task in status.tasks:
            restarts += task.attempt
            roles.setdefault(task.type, []).append(ReplicaStatus(
                id=task.index, state=_TASK_STATES.get(task.state, AppState.UNKNOWN),
                role=task.type, hostname=task.host))
        return DescribeAppResponse(
            app_id=app_id, state=state, num_restarts=restarts,
            msg=status.diagnostics, ui_url=status.tracking_url or None,
            roles_statuses=[RoleStatus(role, replicas) for role, replicas in roles.items()],
            roles=[Role(name=role, image="", num_replicas=len(replicas))
                   for role, replicas in roles.items()])

    def list(self) -> List[ListAppResponse]:
        # This machine's jobs, and the YARN cluster's where a Hadoop configuration names one.
        jobs = tony.list_jobs(all=True, backend="local")
        if os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR"):
            try:
                jobs += tony.list_jobs(all=True, backend="yarn")
            except tony.TonyError:
                pass  # no cluster to ask
        return [ListAppResponse(app_id=job.app_id,
                                state=_BACKEND_STATES.get(job.backend_state, AppState.UNKNOWN))
                for job in jobs]

    def _cancel_existing(self, app_id: str) -> None:
        tony.attach(app_id).kill()

    def log_iter(self, app_id: str, role_name: str, k: int = 0, regex: Optional[str] = None,
                 since: Optional[datetime] = None, until: Optional[datetime] = None,
                 should_tail: bool = False, streams: Optional[Stream] = None) -> Iterable[str]:
        status = self._status(app_id)
        types = {t.type for t in status.tasks} if status else set()
        job_type = role_name if role_name in types else (
            "worker" if types == {"worker"} else _job_type(role_name))
        args = ["logs", app_id, "--task", f"{job_type}:{k}"]
        if streams == Stream.STDERR:
            args.append("--stderr")
        elif streams in (None, Stream.COMBINED):
            args.append("--all")
        if should_tail:
            args.append("--follow")
        lines = _lines_of(_Tony(), args)
        return filter_regex(regex, lines) if regex else lines


def _lines_of(runner: _Tony, args: List[str]) -> Iterable[str]:
    process = subprocess.Popen([tony.tony_binary(), *args], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=runner.environ())
    assert process.stdout is not None
    yield from process.stdout
    _, err = process.communicate()
    if process.returncode != 0 and "has no output of" not in err:  # a task that printed nothing
        raise tony.TonyError(err.strip().splitlines()[-1] if err.strip() else
                             f"tony logs exited with {process.returncode}",
                             exit_code=process.returncode, stderr=err)


def create_scheduler(session_name: str, **kwargs: Any) -> TonyScheduler:
    return TonyScheduler(session_name, **kwargs)
