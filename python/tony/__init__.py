"""Run tony jobs from Python.

    import tony
    job = tony.Job("train.py", src_dir="examples/pytorch-digits", framework="pytorch",
                   instances={"worker": 2}, memory={"worker": "1g"},
                   python_binary_path="/usr/bin/python3")
    run = job.submit()          # returns once the job is submitted
    print(run.app_id, run.status().state)
    result = run.wait()         # the job's end: typed tasks, exit codes, final status
    print(result.state, [t.exit_code for t in result.tasks], result.output_dir)

Everything goes through the `tony` binary (on PATH, or TONY_BIN) and its `--output json`, on the
local backend and on YARN alike. Pure Python, no dependencies.
"""

from tony._job import (
    Job,
    JobInfo,
    JobStatus,
    Run,
    Task,
    TonyError,
    attach,
    list_jobs,
    tony_binary,
)

__all__ = [
    "Job",
    "JobInfo",
    "JobStatus",
    "Run",
    "Task",
    "TonyError",
    "attach",
    "list_jobs",
    "tony_binary",
]
