"""Work the suite only waits for, run beside the tests on the CPU they leave idle.

The suite is bound by 2 cores, but not all the time: over a whole run without these jobs the
cores were 76-79 % busy (the shared session's small queries wait on round trips; the tests
without Spark keep one core); with them, 99 %. A job here is a whole command in processes of its
own (the cluster's drivers, sqlfluff): it starts as soon as it can, in
Linux's idle scheduling class (`chrt --idle`, else `nice 19`; its JVMs and workers inherit it),
so that it takes the CPU the tests leave. It still slows them down some (caches, memory; the
incremental scenario took 346 s beside the jobs against 299 s without, docs/performance.md). The
tests that read a job's result run last (`waits_for` marker, tests/conftest.py); a run of those
tests alone starts the job then.

A test module registers its job at import (`register`) and marks its tests with
`pytest.mark.waits_for(NAME)`; conftest starts the jobs of the collected tests when
collection ends, a job that starts a JVM (`needs_jvm`) once the class archive is made (a JVM
started before it would run without the archive). `result(NAME)` waits for a job and gives what
its `start` function's finisher returns.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A job's start: given a folder of its own and the environment as it was when collection
# ended (tests change theirs), it starts the work and returns the function that waits for it.
Start = Callable[[Path, Mapping[str, str]], Callable[[], Any]]


@dataclass
class _Job:
    start: Start
    needs_jvm: bool
    finish: Callable[[], Any] | None = None
    processes: list[subprocess.Popen] = field(default_factory=list)
    done: Any = None
    failed: BaseException | None = None
    started: threading.Event = field(default_factory=threading.Event)
    ready: threading.Event = field(default_factory=threading.Event)  # finish or failed is set


_JOBS: dict[str, _Job] = {}
_FOLDER: dict[str, Path] = {}
_ENVIRON: dict[str, str] = {}


def register(name: str, start: Start, *, needs_jvm: bool) -> None:
    """Make `name` a job (at a test module's import)."""
    _JOBS.setdefault(name, _Job(start, needs_jvm))


def begin(folder: Path, names: set[str], archive_made: Callable[[], Any]) -> None:
    """Start the jobs among `names`, each in a thread of its own under `folder`: a job that
    starts a JVM once `archive_made()` returns (it waits for the class archive's maker)."""
    _ENVIRON.update(os.environ)
    _FOLDER.setdefault("root", folder)
    for name in sorted(names):
        job = _JOBS.get(name)
        if job is not None and not job.started.is_set():
            job.started.set()
            first = archive_made if job.needs_jvm else None
            threading.Thread(target=_start, args=(name, job, first), daemon=True).start()


def _start(name: str, job: _Job, first: Callable[[], Any] | None = None) -> None:
    try:
        if first is not None:
            first()
        folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_FOLDER["root"]))
        finish = job.start(folder, dict(_ENVIRON or os.environ))
    except BaseException as failed:  # raised again in the test that waits
        job.failed = failed
        finish = None
    job.finish = finish
    job.ready.set()


def result(name: str) -> Any:
    """What job `name` gave, waited for (its failure raised again); started now, in the
    foreground, when it was not (a run of its tests alone)."""
    job = _JOBS[name]
    if not job.started.is_set():
        _FOLDER.setdefault("root", Path(tempfile.mkdtemp(prefix="logmart-jobs-")))
        job.started.set()
        _start(name, job)
    job.ready.wait()
    if job.failed is None and job.done is None:
        try:
            job.done = job.finish()
        except BaseException as failed:  # kept for the job's other tests
            job.failed = failed
    if job.failed is not None:
        raise job.failed
    return job.done


def stop_all() -> None:
    """Stop what is still running (a run stopped early, or a job nobody waited for): each
    job's process group, asked first (a job may have processes of its own to stop)."""
    running = [p for job in _JOBS.values() for p in job.processes if p.poll() is None]
    for process in running:
        os.killpg(process.pid, signal.SIGTERM)
    for process in running:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# Linux's idle scheduling class: a job runs when a core has nothing else to run, but for a sliver.
# Else nice 19, which leaves the tests less: the incremental scenario took 365 s beside nice-19
# jobs, 346 s beside idle-class ones, 299 s alone (one run each, one hour).
def _lowest_priority() -> tuple[str, ...]:
    if shutil.which("chrt"):
        return ("chrt", "--idle", "0")
    if shutil.which("nice"):
        return ("nice", "-n", "19")
    return ()


NICE = _lowest_priority()


def spawn(
    name: str,
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
) -> Callable[[], subprocess.CompletedProcess]:
    """`argv` started now at the lowest CPU priority, its output in files (a pipe nobody
    reads would stop it), in a process group of its own but in this session: Linux schedules
    each session as a group of its own (autogroup), whatever the nice value of its processes,
    so a job in a new session would take half the CPU from the tests. The returned function
    waits for it (at most `timeout` seconds from its start) and gives its exit code and
    output, as `subprocess.run` would."""
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    process = subprocess.Popen(
        [*NICE, *argv], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=dict(env),
        cwd=cwd, process_group=0,
    )  # fmt: skip
    _JOBS[name].processes.append(process)
    deadline = time.monotonic() + timeout

    def finish() -> subprocess.CompletedProcess:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        texts = []
        for file in (out, err):
            file.seek(0)
            texts.append(file.read().decode("utf-8", errors="replace"))
            file.close()
        return subprocess.CompletedProcess(argv, process.returncode, *texts)

    return finish
