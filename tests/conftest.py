"""Shared fixtures: one JVM and one embedded Spark session for the whole test run.

A JVM takes seconds to start and more to warm up, and one process at a time uses a warehouse,
so every test that needs Spark shares the session-scoped `spark` fixture (warehouse in a temp
folder), on the run's one JVM (`spark_jvm`). The scenarios that build warehouses of their own
(fixture `own_warehouse`: the incremental scenario with its snapshots, the capture settings' builds)
run on that JVM before the shared session starts; a whole `logmart` command among them runs in
this process too (`run_logmart`). When the run has the incremental scenario, its last build
(from scratch, every dbt test) is the demo's too (`demo`), and its warehouse the shared one.
The fault matrix's damaged captures are inputs of that build too (`EXTRA_INPUTS`).
Tests that need another Spark process (lock, no-Java runs, a command as a user's shell runs
it) start it with `subprocess`. The two largest commands in processes of their own (the
cluster's drivers, sqlfluff) are background jobs (tests/background.py): they start when
collection ends, in the idle scheduling class, and their tests run last.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests import background
from udfs.session import one_jvm, spark_session

# Small but complete workloads: every scripted case of each generator, built in one go.
DEMO_TRANSACTIONS = 40
DEMO_SEED = 7
# More inputs for that same one build (another export format of a capture, a damaged capture):
# functions of the raw folder, appended by a source's test module when it is imported
# (`from tests.conftest import EXTRA_INPUTS`), so they are all in place before `demo` builds.
EXTRA_INPUTS: list[Callable[[Path], None]] = []


# The run's own cache folder (dbt's parse, udfs.dbt_runner.parse_cache, and the JVM's class
# archive, udfs/class_archive.py), not the user's: the first warehouse of the run parses in full
# and the later ones start from its parse; every JVM of the run maps the archive made at its
# start. Set before collection ends, so that the archive's maker and every subprocess see it.
_RUN_CACHE: dict[str, object] = {}


def pytest_configure(config: pytest.Config) -> None:
    folder = Path(tempfile.mkdtemp(prefix="logmart-tests-cache-"))
    _RUN_CACHE.update(folder=folder, before=os.environ.get("LOGMART_CACHE_DIR"))
    os.environ["LOGMART_CACHE_DIR"] = str(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    background.stop_all()
    maker = _RUN_CACHE.get("maker")
    if isinstance(maker, subprocess.Popen) and maker.poll() is None:
        maker.kill()
        maker.wait()
    if "folder" in _RUN_CACHE:
        shutil.rmtree(_RUN_CACHE["folder"], ignore_errors=True)
        before = _RUN_CACHE["before"]
        if before is None:
            os.environ.pop("LOGMART_CACHE_DIR", None)
        else:
            os.environ["LOGMART_CACHE_DIR"] = before


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start making the class archive when the run has a Spark test (marker `spark`; a run of
    unit tests starts no JVM), in the background: the tests without Spark, which run first
    (pytest_collection_modifyitems), keep one core busy, and the maker takes the other. Then
    the background jobs the collected tests wait for (tests/background.py): one that starts a
    JVM once the archive is made."""
    from udfs.class_archive import start_in_foreground

    # the demo's build is the incremental scenario's last when the run has both (`demo`)
    _RUN_CACHE["scenario"] = any(
        "stream_scenario" in getattr(item, "fixturenames", ()) for item in session.items
    )
    if any(item.get_closest_marker("spark") for item in session.items):
        _RUN_CACHE["maker"] = start_in_foreground()
    maker = _RUN_CACHE.get("maker")
    jobs = {mark.args[0] for item in session.items for mark in item.iter_markers("waits_for")}
    folder = Path(tempfile.mkdtemp(prefix="jobs-", dir=_RUN_CACHE["folder"]))
    archive_made = maker.wait if isinstance(maker, subprocess.Popen) else lambda: None
    background.begin(folder, jobs, archive_made)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A Spark test starts once the archive is there (before its fixtures: a session or a
    subprocess started without it would run without the archive)."""
    if item.get_closest_marker("spark"):
        wait_for_class_archive()


def wait_for_class_archive() -> None:
    """Wait for the maker the first time; fail every Spark test of the run when it failed."""
    from udfs.class_archive import wait_for

    maker = _RUN_CACHE.pop("maker", None)
    if isinstance(maker, subprocess.Popen):
        try:
            wait_for(maker)
        except subprocess.CalledProcessError as failed:
            _RUN_CACHE["failed"] = f"the class archive's maker failed:\n{failed.stdout}"
    if "failed" in _RUN_CACHE:
        pytest.fail(str(_RUN_CACHE["failed"]))


def environment_without_settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment (or `environ`) without logmart's settings (LOGMART_*), for
    a `logmart` command that must run on its defaults; the run's parse cache stays."""
    return {
        name: value
        for name, value in (os.environ if environ is None else environ).items()
        if not name.startswith("LOGMART_") or name == "LOGMART_CACHE_DIR"
    }


def run_logmart(
    argv: list[str], variables: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """A `logmart` command as its console script runs it (`udfs.cli.main`), in this process and
    on the run's JVM (`spark_jvm`): its exit code and what it printed (Python's stdout and
    stderr; the JVM's own output is not in them). It runs on logmart's defaults plus
    `variables` (the environment as `environment_without_settings`), put back after it.
    For tests of modules with a warehouse of their own (`own_warehouse`): a command opens its
    warehouse's metastore, which the JVM then keeps (no other process can open it)."""
    from udfs.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for name in set(os.environ) - set(environment_without_settings()):
            patch.delenv(name)
        for name, value in (variables or {}).items():
            patch.setenv(name, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    return subprocess.CompletedProcess(["logmart", *argv], code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def scenario_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The incremental scenario's folder (stage, raw, warehouse)."""
    return tmp_path_factory.mktemp("incremental")


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory, scenario_work: Path) -> Path:
    """The test session's warehouse folder (tables, metastore_db, derby.log, dbt output): the
    incremental scenario's when the run has it (its last build is the demo's: `demo`)."""
    if _RUN_CACHE.get("scenario"):
        folder = scenario_work / "warehouse"
        folder.mkdir()
        return folder
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="session")
def spark_launch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder that is the JVM's working directory: whatever Spark, Hive or Derby
    writes relative to the cwd lands here, so a test can check that nothing does."""
    return tmp_path_factory.mktemp("spark-cwd")


@pytest.fixture(scope="session")
def spark_jvm(warehouse: Path, spark_launch_dir: Path) -> Iterator[None]:
    """The run's one JVM (udfs.session.one_jvm), for `spark` and for the scenarios that build
    warehouses of their own in this process before it (`own_warehouse`, below): each
    of them would otherwise warm up a JVM of its own, about 20 s (docs/performance.md). It is
    started by a session on `warehouse` (stopped at once), so that the JVM's working folder and
    derby.log are the shared session's."""
    before = Path.cwd()
    os.chdir(spark_launch_dir)  # the JVM's cwd is fixed when it starts
    try:
        with one_jvm():
            with spark_session(warehouse, app_name="logmart-tests", profile="large"):
                os.chdir(before)
            yield
    finally:
        os.chdir(before)


@pytest.fixture(scope="session")
def spark(spark_jvm: None, warehouse: Path) -> Iterator[SparkSession]:
    """THE logmart session on `warehouse`, shared by every test; stopped at the end."""
    # the large profile: this session lives for the whole run, where C2 pays (a small one made
    # the suite's in-process tests slower: docs/performance.md)
    with spark_session(warehouse, app_name="logmart-tests", profile="large") as session:
        yield session


@pytest.fixture(scope="module")
def own_warehouse(spark_jvm: None) -> None:
    """For a module whose fixture builds a warehouse of its own on the run's JVM: its tests run
    before any test of the shared session (one session at a time in a JVM)."""
    _before_the_shared_session("an own_warehouse test")


def _before_the_shared_session(what: str) -> None:
    if SparkSession._instantiatedSession is not None:
        pytest.fail(f"the shared session is already running: {what} must run first")


@contextlib.contextmanager
def printed(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """What the code inside prints, the JVM and its Python workers included, as one text
    appended to the list given; nothing is appended when pytest does not capture the file
    descriptors (`-s`, `--capture=sys`). The JVM writes to the descriptor it was started
    with, the run's captured stderr, so the text is read from pytest's capture (and written
    back to it, for the report of a test that fails)."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    found: list[str] = []
    if capture is None or request.config.getoption("capture") != "fd":
        yield found
        return
    before = capture.read_global_capture()
    try:
        yield found
    finally:
        after = capture.read_global_capture()
        found.append(after.out + after.err)
        sys.stdout.write(before.out + after.out)
        sys.stderr.write(before.err + after.err)


@pytest.fixture(scope="session")
def stream_scenario(request: pytest.FixtureRequest, spark_jvm: None, scenario_work: Path) -> dict:
    """What the incremental scenario recorded (tests/incremental/scenario.py: a log stream per
    source in two captures, built incrementally, with base snapshots added, and from scratch),
    on the run's JVM with a warehouse of its own, once for the two modules that check it
    (tests/incremental, tests/marts/test_snapshots_build.py: both request `own_warehouse`, so
    they run before the shared session)."""
    from tests.incremental.scenario import main

    _before_the_shared_session("the incremental scenario")
    with printed(request) as output:
        main(scenario_work, more_inputs=write_demo_inputs)
    result = json.loads((scenario_work / "result.json").read_text())
    result["output"] = output[0] if output else None
    return result


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the `spark` fixture (or the run's JVM) is a `spark` test
    (`-m "not spark"` skips it). The tests without Spark run first, beside the class archive's
    maker; then the tests of the modules with a warehouse of their own, then the others, and
    last the tests that wait for a background job (marker `waits_for`: tests/background.py),
    so that the job has the whole run to finish in (each kind keeps the order it was
    collected in)."""
    for item in items:
        if "spark_jvm" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    items.sort(key=_run_order)


def _run_order(item: pytest.Item) -> int:
    if item.get_closest_marker("waits_for") is not None:
        return 3
    if item.get_closest_marker("spark") is None:
        return 0
    return 1 if "own_warehouse" in getattr(item, "fixturenames", ()) else 2


@dataclass(frozen=True)
class Demo:
    """A raw folder with every source's generated logs, built once into the test warehouse."""

    raw: Path
    warehouse: Path
    summary: dict
    output: str | None  # what the build printed, the JVM's output too (`printed`)


def _generators() -> list:
    """Each source's generate(out_dir, transactions, seed)."""
    from logmart_generators import db2luw, logmaster, soliddb

    return [logmaster.generate, db2luw.generate, soliddb.generate]


def write_demo_inputs(raw: Path) -> None:
    """The demo's inputs under ``raw``: each generator's workload (its truth in raw/truth) and
    the sources' other inputs (EXTRA_INPUTS)."""
    for generate in _generators():
        generate(raw, DEMO_TRANSACTIONS, DEMO_SEED)
    for write_inputs in EXTRA_INPUTS:
        write_inputs(raw)


@pytest.fixture(scope="session")
def demo(
    request: pytest.FixtureRequest,
    spark_jvm: None,
    warehouse: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Demo:
    """Generated logs of every source under one raw folder, built once (load + dbt build) with
    every dbt test: logmart's unit tests and the tests of its SQL's invariants run there.
    When the run has the incremental scenario, its streams share that folder and its build
    from scratch is this build (one build of the graph instead of two); the shared session
    then opens its warehouse. The demo's captures are other log streams than the scenario's."""
    from udfs.pipeline import build

    if _RUN_CACHE.get("scenario"):
        scenario = request.getfixturevalue("stream_scenario")
        request.getfixturevalue("spark")
        return Demo(
            Path(scenario["raw"]), warehouse, scenario["summaries"]["scratch"], scenario["output"]
        )
    spark = request.getfixturevalue("spark")
    raw = tmp_path_factory.mktemp("raw")
    write_demo_inputs(raw)
    with printed(request) as output:
        summary = build(spark, raw, warehouse, checks="all")
    return Demo(raw, warehouse, summary, output[0] if output else None)
