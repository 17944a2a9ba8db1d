"""logmart on a real standalone Spark cluster on this machine (127.0.0.1 only).

`run_on_cluster` starts a master and one worker from the PySpark wheel (`bin/spark-class`), runs
two drivers on it (a probe, `logmart build --master`, then `logmart query` on what it built),
and always kills both. It all runs as a background job of the test run
(tests/background.py: `python -m tests.test_cluster FOLDER`, in the idle scheduling class, on the
CPU the other tests leave idle); the tests below run last and check what it recorded. The
drivers are processes of their own: a process has one SparkContext.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pyspark
import pytest

from tests import background
from udfs.session import resolve_java

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.waits_for("cluster")]

SPARK_HOME = Path(pyspark.__file__).resolve().parent
# seconds for master and worker to come up on a busy 2-core machine, in the idle class
START_TIMEOUT = 900
REPO = Path(__file__).resolve().parents[1]


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
        except (OSError, ValueError):
            pass  # not listening yet, or its first answers empty (seen on a busy machine)
        time.sleep(0.5)
    tails = "\n".join(f"--- {log}\n{log.read_text()[-3000:]}" for log in logs if log.exists())
    raise RuntimeError(f"{what} did not come up within {START_TIMEOUT} s\n{tails}")


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with log.open("wb") as out:
        # Own process group: `_kill` stops exactly what it started, children included. Not a
        # session of its own: the job's low CPU priority holds within its session only
        # (tests/background.py).
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=out, stderr=subprocess.STDOUT, env=env, process_group=0,
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


@contextlib.contextmanager
def standalone_cluster(root: Path) -> Iterator[str]:
    """`spark://127.0.0.1:<port>` of a master with one 1-core, 1 GB worker (logs and work
    folder under `root`)."""
    root.mkdir(parents=True, exist_ok=True)
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


def _ran(argv: list[str], env: dict[str, str], timeout: float) -> dict:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    return {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def run_on_cluster(folder: Path) -> dict:
    """The job's work, in its own process: the cluster up, the probe's driver, the build of a
    generated Log Master capture and a query of its marts, each as a user's shell runs it."""
    from logmart_generators.logmaster import generate

    raw, warehouse = folder / "raw", folder / "warehouse"
    generate(raw, 24, 5)
    env = {
        **cluster_env(),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    found: dict = {"expected": json.loads((raw / "truth/db2zos/summary.json").read_text())}
    with standalone_cluster(folder / "cluster") as url:
        found["master"] = url
        found["probe"] = _ran(
            [sys.executable, "-c", DRIVER, str(folder / "probe-warehouse"), url], env, 600
        )
        found["build"] = _ran(
            # models only: dbt's data and unit tests run on the local builds of the same models
            ["logmart", "build", "--raw", str(raw), "--warehouse", str(warehouse),
             "--master", url, "--", "--exclude-resource-type", "test",
             "--exclude-resource-type", "unit_test"],
            env, 1500,
        )  # fmt: skip
    if found["build"]["returncode"] == 0:
        found["query"] = _ran(
            ["logmart", "query", "--warehouse", str(warehouse), "--format", "json",
             "select count(*) as changes, count_if(disposition = 'committed') as committed "
             "from marts.fct_changes where source_system = 'db2zos'"],
            env, 600,
        )  # fmt: skip
    return found


def start_on_cluster(folder: Path, environ: dict[str, str]) -> Callable[[], dict]:
    """The job `cluster` (tests/background.py): `run_on_cluster` in a process of its own."""
    finish = background.spawn(
        "cluster", [sys.executable, "-m", "tests.test_cluster", str(folder)],
        env=environ, cwd=REPO, timeout=2400,
    )  # fmt: skip

    def recorded() -> dict:
        job = finish()
        assert job.returncode == 0, (job.stdout + job.stderr)[-5000:]
        return json.loads((folder / "result.json").read_text())

    return recorded


background.register("cluster", start_on_cluster, needs_jvm=True)


@pytest.fixture(scope="module")
def on_cluster() -> dict:
    return background.result("cluster")


def test_udf_importing_udfs_runs_on_the_executor(on_cluster: dict) -> None:
    result = on_cluster["probe"]
    assert result["returncode"] == 0, result["stderr"][-5000:]
    report = json.loads(result["stdout"].strip().splitlines()[-1])
    assert report["master"] == on_cluster["master"]
    assert report["executors"] == 2  # the driver's block manager and one executor
    for row in report["rows"]:
        assert row["pid"] != report["driver_pid"]
        assert "/work/app-" in row["cwd"]  # an executor's folder under the worker's work dir
        # Imported from the zip get_spark shipped (it comes first on the worker's sys.path).
        assert row["module"].endswith("udfs.zip/udfs/errors.py")
    assert sorted(row["offset"] for row in report["rows"]) == [0, 1]


def test_build_runs_on_the_cluster(on_cluster: dict) -> None:
    """`logmart build --master spark://…` decodes and builds on the cluster's executor, and the
    marts it writes replay to the generator's tables (the same check as the local build)."""
    build = on_cluster["build"]
    assert build["returncode"] == 0, (build["stdout"] + build["stderr"])[-5000:]
    assert "db2zos" in build["stdout"]
    # dbt's own log stays in its log file: a progress line per tenth of the nodes, no model list
    progress = [line for line in build["stderr"].splitlines() if line.startswith("dbt: ")]
    assert progress, build["stderr"][-3000:]
    done, total = progress[-1].split()[1].split("/")
    assert done == total
    assert "OK created" not in build["stderr"] + build["stdout"]
    query = on_cluster["query"]
    assert query["returncode"] == 0, query["stderr"][-3000:]
    counts = json.loads(query["stdout"].strip().splitlines()[-1])
    expected = on_cluster["expected"]
    assert counts["changes"] > 0 and counts["committed"] > 0
    assert counts["changes"] == sum(
        n for kind, n in expected["change_types"].items() if kind not in ("CO", "CM", "SC", "E")
    )


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(f"stopped by signal {signum}")  # the cluster's `finally` kills it


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    out = Path(sys.argv[1])
    (out / "result.json").write_text(json.dumps(run_on_cluster(out)))
