"""torchx's own CLI (from PyPI) with the scheduler `tony` this package registers: dist.ddp runs as
a tony job, and `torchx status`, `log`, `list` and `cancel` work on it."""
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

from conftest import JOBS

# Debian's torch 1.13 under Python 3.11 reads only 1 and 2 as torchrun's --tee and --redirects
# (0 and 3 are Flag aliases that 3.11 no longer iterates), so dist.ddp's default --tee 3 fails
# there before it starts a worker: the test asks for 1, as a user of that torch must.
DDP = ["dist.ddp", "-j", "2x1", "--cpu", "1", "--memMB", "512", "--tee", "1",
       "--env", "PET_REDIRECTS=1"]


def torchx(backend, tmp_path, *args, timeout=300):
    env = dict(os.environ)
    env.update(backend.env)
    done = subprocess.run([sys.executable, "-m", "torchx.cli.main", *args], cwd=JOBS, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
    return done


def cfg(backend, tmp_path):
    conf = tmp_path / "tony.xml"
    conf.write_text("<configuration>" + "".join(
        f"<property><name>{k}</name><value>{v}</value></property>"
        for k, v in backend.conf.items()) + "</configuration>")
    return f"backend={backend.name},src_dir={JOBS},conf_file={conf}"


def handle_of(output):
    match = re.search(r"tony://torchx/(application_\d+_\d+)", output)
    assert match, output
    return match.group(0), match.group(1)


def test_torchx_runs_ddp_as_a_tony_job(backend, tmp_path):
    run = torchx(backend, tmp_path, "run", "-s", "tony", "-cfg", cfg(backend, tmp_path),
                 "--wait", *DDP, "--script", "ddp_allreduce.py")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "Job finished: SUCCEEDED" in out, out
    handle, app_id = handle_of(out)

    status = torchx(backend, tmp_path, "status", handle)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "State: SUCCEEDED" in status.stdout, status.stdout
    assert "worker[1]:SUCCEEDED" in status.stdout, status.stdout

    # torchrun's rendezvous decides which worker is rank 0: the line is in one of their logs.
    log = torchx(backend, tmp_path, "log", handle)
    assert log.returncode == 0, log.stdout + log.stderr
    assert re.search(r"worker/[01] .*sum 3 over 2 ranks", log.stdout), log.stdout

    listed = torchx(backend, tmp_path, "list", "-s", "tony")
    assert handle in listed.stdout, listed.stdout + listed.stderr


def test_torchx_cancels_a_tony_job(backend, tmp_path):
    run = torchx(backend, tmp_path, "run", "-s", "tony", "-cfg", cfg(backend, tmp_path), *DDP,
                 "--script", "ddp_forever.py")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    handle, _ = handle_of(out)
    deadline = time.monotonic() + 120
    while "started" not in torchx(backend, tmp_path, "log", handle + "/worker/0").stdout:
        assert time.monotonic() < deadline, "worker:0 never started"
        time.sleep(0.5)
    cancel = torchx(backend, tmp_path, "cancel", handle)
    assert cancel.returncode == 0, cancel.stdout + cancel.stderr
    deadline = time.monotonic() + 120
    while "State: CANCELLED" not in torchx(backend, tmp_path, "status", handle).stdout:
        assert time.monotonic() < deadline, "the job was not cancelled"
        time.sleep(0.5)
