"""tony.Job, Run and list_jobs against the real binary: results typed from `--output json`."""
import pathlib
import sys
import time

import pytest

import tony
from conftest import JOBS


def job(backend, executes, **kwargs):
    args = backend.job_args()
    args["conf"].update(kwargs.pop("conf", {}))
    return tony.Job(executes, src_dir=str(JOBS), python_binary_path="/usr/bin/python3",
                    instances={"worker": 2}, memory={"worker": "256m"},
                    **args, **kwargs)


def wait_for(what, check, timeout=120):
    """Polls `check` until it returns something true (a TonyError counts as not yet); fails
    naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
        except tony.TonyError:  # e.g. no history to read yet
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} after {timeout} s")
        time.sleep(0.2)


def test_a_job_runs_to_a_typed_result(backend):
    run = job(backend, "write_output.py").submit()
    assert run.app_id.startswith("application_")
    result = run.wait(timeout=300)
    assert result.succeeded, run.output
    assert result.state == "SUCCEEDED" and result.complete and result.exit_code == 0
    assert sorted(t.name for t in result.tasks) == ["worker:0", "worker:1"]
    assert all(t.exit_code == 0 and t.state == "SUCCEEDED" for t in result.tasks)
    assert result.output_dir and result.output_dir == run.output_dir
    if backend.name == "local":
        written = sorted(p.name for p in pathlib.Path(result.output_dir).iterdir())
        assert written == ["worker-0.txt", "worker-1.txt"]
    # The same job, asked again from outside: its status and its tasks' output.
    status = run.status()
    assert status.state == "SUCCEEDED" and status.final_status == "SUCCEEDED"
    assert status.task("worker:1").exit_code == 0
    assert "worker-1 wrote its output" in run.logs(task="worker:1")
    assert tony.attach(run.app_id, env=backend.env,
                       backend=backend.name).wait(timeout=60).succeeded


def test_a_failed_task_is_named_with_its_exit_code(backend):
    # worker:0 is the chief; another worker's failure fails the job only when asked (TonY's rule).
    result = job(backend, "fail_one.py",
                 conf={"tony.application.fail-on-worker-failure-enabled": True}).run(timeout=300)
    assert result.state == "FAILED"
    assert result.exit_code == 1
    assert result.task("worker:1").exit_code == 3
    assert result.task("worker:1").state == "FAILED"


def test_a_running_job_is_seen_listed_and_killed(backend):
    run = job(backend, "run_until_stopped.py", conf={"tony.task.stop-grace-ms": 1000}).submit()
    try:
        wait_for("running tasks", lambda: (
            len([t for t in run.status().tasks if t.state == "RUNNING"]) == 2))
        wait_for("output of worker:0", lambda: "started" in run.logs(task="worker:0"))
        listed = tony.list_jobs(backend=backend.name, env=backend.env)
        assert run.app_id in [j.app_id for j in listed]
        assert not run.done()
        run.kill()
    finally:
        if not run.done():
            run.kill()
    result = run.wait(timeout=120)
    assert result.state == "KILLED"
    assert result.exit_code != 0


def test_bad_input_raises_the_line_that_names_it(tmp_path):
    bad = tony.Job("write_output.py", src_dir=str(JOBS), python_binary_path="/usr/bin/python3",
                   conf={"tony.worker.instances": -1},
                   env={"TONY_HOME": str(tmp_path / "tony-home")})
    with pytest.raises(tony.TonyError) as error:
        bad.submit()
    assert error.value.exit_code == 2
    assert str(error.value) == ('tony.worker.instances = "-1" (--conf): expected a non-negative '
                                "integer")
    assert not (tmp_path / "tony-home" / "jobs").exists()


def test_the_binary_is_found_through_tony_bin(monkeypatch, tmp_path):
    monkeypatch.setenv("TONY_BIN", str(tmp_path / "missing"))
    with pytest.raises(tony.TonyError, match="is not an executable file"):
        tony.tony_binary()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
