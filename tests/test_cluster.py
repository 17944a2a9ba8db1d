"""logmart on a real standalone Spark cluster on this machine (127.0.0.1 only).

The `standalone_cluster` fixture starts a master and one worker from the PySpark wheel
(`bin/spark-class`), and always kills both. The driver runs in a subprocess: this pytest
process already has the local test session, and a process has one SparkContext.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from udfs.session import resolve_java

pytestmark = [pytest.mark.cluster, pytest.mark.spark]

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_TIMEOUT = 120  # seconds for master and worker to come up on a busy 2-core machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cluster_env() -> dict[str, str]:
    """Environment for spark-class and the driver: Java found, everything on loopback."""
    env = {**os.environ, **resolve_java(os.environ)}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable)  # fmt: skip
    return env


def _master_state(webui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{webui_port}/json/", timeout=5) as answer:
        return json.load(answer)


def _wait_for(what: str, ready, procs: list[subprocess.Popen], logs: list[Path]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if any(proc.poll() is not None for proc in procs):
            break
        try:
            if ready():
                return
        except OSError:
            pass  # not listening yet
        time.sleep(0.5)
    tails = "\n".join(f"--- {log}\n{log.read_text()[-3000:]}" for log in logs if log.exists())
    pytest.fail(f"{what} did not come up within {START_TIMEOUT} s\n{tails}")


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with log.open("wb") as out:
        # Own process group: the fixture kills exactly what it started, children included.
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`spark://127.0.0.1:<port>` of a master with one 1-core, 1 GB worker."""
    root = tmp_path_factory.mktemp("cluster")
    env = cluster_env()
    port, master_ui, worker_ui = free_port(), free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs = [root / "master.log", root / "worker.log"]
    try:
        procs.append(_start(
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(master_ui)],
            logs[0], env,
        ))  # fmt: skip
        _wait_for("master", lambda: _master_state(master_ui)["status"] == "ALIVE", procs, logs)
        procs.append(_start(
            ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
             "--cores", "1", "--memory", "1g", "--webui-port", str(worker_ui),
             "--work-dir", str(root / "work")],  # not the default: inside the PySpark wheel
            logs[1], env,
        ))  # fmt: skip

        def worker_alive() -> bool:
            workers = _master_state(master_ui)["workers"]
            return any(worker["state"] == "ALIVE" for worker in workers)

        _wait_for("worker", worker_alive, procs, logs)
        yield url
    finally:
        for proc in reversed(procs):
            _kill(proc)


DRIVER = """
import json, os, sys
from pathlib import Path
from pyspark.sql.functions import udf
from pyspark.sql.types import StringType
from udfs.session import spark_session

@udf(StringType())  # a DDL string would need a session first
def where_am_i(n):
    # Imported on the executor: the udfs package must be there (shipped as udfs.zip).
    import udfs.errors
    error = udfs.errors.DecodeError("probe", offset=int(n))
    return json.dumps({"pid": os.getpid(), "cwd": os.getcwd(),
                       "module": udfs.errors.__file__, "offset": error.offset})

with spark_session(Path(sys.argv[1]), master=sys.argv[2]) as spark:
    rows = spark.range(2).select(where_am_i("id").alias("w")).collect()
    print(json.dumps({
        "master": spark.sparkContext.master,
        "executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size(),
        "rows": [json.loads(row.w) for row in rows],
        "driver_pid": os.getpid(),
    }))
"""


def test_udf_importing_udfs_runs_on_the_executor(standalone_cluster: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", DRIVER, str(tmp_path / "warehouse"), standalone_cluster],
        capture_output=True, text=True, env=cluster_env(), timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-5000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["master"] == standalone_cluster
    assert report["executors"] == 2  # the driver's block manager and one executor
    for row in report["rows"]:
        assert row["pid"] != report["driver_pid"]
        assert "/work/app-" in row["cwd"]  # an executor's folder under the worker's work dir
        # Imported from the zip get_spark shipped (it comes first on the worker's sys.path).
        assert row["module"].endswith("udfs.zip/udfs/errors.py")
    assert sorted(row["offset"] for row in report["rows"]) == [0, 1]


def test_build_runs_on_the_cluster(standalone_cluster: str, tmp_path: Path) -> None:
    """`logmart build --master spark://…` decodes and builds on the cluster's executor, and the
    marts it writes replay to the generator's tables (the same check as the local build)."""
    from logmart_generators.logmaster import generate

    raw, warehouse = tmp_path / "raw", tmp_path / "warehouse"
    generate(raw, 24, 5)
    env = {
        **cluster_env(),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    build = subprocess.run(
        # models only: dbt's data and unit tests run on the local builds of the same models
        ["logmart", "build", "--raw", str(raw), "--warehouse", str(warehouse),
         "--master", standalone_cluster, "--", "--exclude-resource-type", "test",
         "--exclude-resource-type", "unit_test"],
        capture_output=True, text=True, env=env, timeout=1500,
    )  # fmt: skip
    assert build.returncode == 0, (build.stdout + build.stderr)[-5000:]
    assert "db2zos" in build.stdout
    # dbt's own log stays in its log file: a progress line per tenth of the nodes, no model list
    progress = [line for line in build.stderr.splitlines() if line.startswith("dbt: ")]
    assert progress, build.stderr[-3000:]
    done, total = progress[-1].split()[1].split("/")
    assert done == total
    assert "OK created" not in build.stderr + build.stdout
    query = subprocess.run(
        ["logmart", "query", "--warehouse", str(warehouse), "--format", "json",
         "select count(*) as changes, count_if(disposition = 'committed') as committed "
         "from marts.fct_changes where source_system = 'db2zos'"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert query.returncode == 0, query.stderr[-3000:]
    counts = json.loads(query.stdout.strip().splitlines()[-1])
    expected = json.loads((raw / "truth" / "db2zos" / "summary.json").read_text())
    assert counts["changes"] > 0 and counts["committed"] > 0
    assert counts["changes"] == sum(
        n for kind, n in expected["change_types"].items() if kind not in ("CO", "CM", "SC", "E")
    )
