"""Scenarios that build in processes of their own, run beside the rest of the suite.

A scenario (the incremental builds, the fault matrix, the snapshot builds) is a whole
`logmart build` or several, each in its own Python process, JVM and warehouse. Run one after
the other in the test process they would leave a core idle: the suite's own Spark session runs
small queries whose time is mostly latency. So the scenarios the session selected start, one
at a time and in the order their tests run, on a thread of their own as soon as the session's
first test starts; their tests run last (`order_last`) and wait for their own scenario's
result.

A scenario is a function of a work folder that runs its processes through `Scenario.run`, so
that a session ending early (Ctrl-C, `-x`) stops them. Its tests read the result with
``background.result(name)``; run alone (one module selected), the scenario starts the same way.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

SCENARIOS: dict[str, tuple[Path, Callable[[Scenario], Any]]] = {}


class Scenario:
    """What a scenario function gets: its work folder, and a way to run its processes."""

    def __init__(self, work: Path, stopping: threading.Event, running: set):
        self.work = work
        self._stopping = stopping
        self._running = running

    def run(self, args: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        """`subprocess.run`, but the process is killed when the test session ends first."""
        if self._stopping.is_set():
            raise RuntimeError("the test session ended before this scenario ran")
        timeout = kwargs.pop("timeout", None)
        check = kwargs.pop("check", False)
        capture = kwargs.pop("capture_output", False)
        if capture:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        with subprocess.Popen(args, **kwargs) as process:
            self._running.add(process)
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except BaseException:
                process.kill()
                process.wait()
                raise
            finally:
                self._running.discard(process)
        done = subprocess.CompletedProcess(args, process.returncode, stdout, stderr)
        if check:
            done.check_returncode()
        return done


def scenario(name: str, module: str) -> Callable:
    """Register ``function(Scenario) -> result`` as scenario ``name``, whose tests are those of
    the test module at path ``module`` (its ``__file__``)."""

    def register(function: Callable[[Scenario], Any]) -> Callable[[Scenario], Any]:
        SCENARIOS[name] = (Path(module).resolve(), function)
        return function

    return register


class Runner:
    """Runs the selected scenarios one at a time on a thread; results as futures."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory):
        self._tmp = tmp_path_factory
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scenario")
        self._futures: dict[str, Future] = {}
        self._stopping = threading.Event()
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()

    def start(self, name: str) -> Future:
        with self._lock:
            if name not in self._futures:
                _, function = SCENARIOS[name]
                work = self._tmp.mktemp(name)
                context = Scenario(work, self._stopping, self._running)
                self._futures[name] = self._pool.submit(function, context)
            return self._futures[name]

    def result(self, name: str) -> Any:
        return self.start(name).result()

    def stop(self) -> None:
        self._stopping.set()
        for process in list(self._running):
            process.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)


_RUNNER: Runner | None = None


def result(name: str) -> Any:
    """Scenario ``name``'s result: waits for it (starts it if nothing did)."""
    assert _RUNNER is not None, "the background fixture of tests/conftest.py is not active"
    return _RUNNER.result(name)


def scenario_of(item: pytest.Item) -> str | None:
    """The scenario whose result test ``item`` reads, if any."""
    path = Path(item.path).resolve()
    return next((name for name, (module, _) in SCENARIOS.items() if module == path), None)


def order_last(items: list[pytest.Item]) -> None:
    """Move the scenarios' tests after every other test (stable otherwise), so the session's
    own tests run while the scenarios build."""
    items.sort(key=lambda item: scenario_of(item) is not None)


def start_session(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Item]) -> Runner:
    """Start the scenarios of the selected tests, in the order their tests run."""
    global _RUNNER
    _RUNNER = Runner(tmp_path_factory)
    for item in items:
        name = scenario_of(item)
        if name is not None:
            _RUNNER.start(name)
    return _RUNNER


def end_session() -> None:
    global _RUNNER
    if _RUNNER is not None:
        _RUNNER.stop()
        _RUNNER = None
