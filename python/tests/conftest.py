"""The Python API's tests run the real tony binary (TONY_BIN) on the local backend and, with the
marker yarn, on the mini cluster TONY_TEST_HADOOP_CONF_DIR names."""
import os
import pathlib

import pytest

JOBS = pathlib.Path(__file__).parent / "jobs"


def pytest_configure(config):
    config.addinivalue_line("markers", "yarn: needs the Hadoop mini cluster")


def _yarn_cluster():
    conf = os.environ.get("TONY_TEST_HADOOP_CONF_DIR")
    if not conf:
        return None
    values = {}
    env_file = pathlib.Path(conf) / "minicluster.env"
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            key, _, value = line.partition("=")
            values[key] = value
    return conf, values


class Backend:
    """Where a test's jobs run: the backend's name, what `tony` needs in its environment and the
    job keys of this cluster."""

    def __init__(self, name, env, conf):
        self.name = name
        self.env = env
        self.conf = conf

    def job_args(self):
        return {"backend": self.name, "env": self.env, "conf": dict(self.conf)}


@pytest.fixture(params=["local", pytest.param("yarn", marks=pytest.mark.yarn)])
def backend(request, tmp_path):
    env = {"TONY_HOME": str(tmp_path / "tony-home")}
    if request.param == "local":
        return Backend("local", env, {"tony.local.vcores": 16})
    cluster = _yarn_cluster()
    if cluster is None:
        pytest.skip("TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)")
    conf_dir, values = cluster
    if values.get("MINICLUSTER_SECURE") == "true":
        pytest.skip("the Python API's YARN cases run on the plain mini cluster")
    env["HADOOP_CONF_DIR"] = conf_dir
    return Backend("yarn", env, {"tony.am.memory": "256m"})
