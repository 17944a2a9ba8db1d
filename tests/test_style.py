"""The tree is clean: ruff (lint and format) on the Python, sqlfluff on the dbt SQL.

Part of the suite, so the README's one test command and `.ci/run` check style too.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import background

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=1800
    )


def test_python_is_ruff_clean():
    checked = run("ruff", "check", ".")
    assert checked.returncode == 0, checked.stdout[-6000:] + checked.stderr[-2000:]
    formatted = run("ruff", "format", "--check", ".")
    assert formatted.returncode == 0, formatted.stdout[-6000:] + formatted.stderr[-2000:]


def start_sqlfluff(
    folder: Path, environ: dict[str, str]
) -> Callable[[], subprocess.CompletedProcess]:
    """The job `sqlfluff` (tests/background.py): the lint started; returns its finisher.
    .sqlfluff: jinja templater with dbt's builtins and our macros, no database needed; the
    Rust parser of `sqlfluff[rs]` (the test extras) when installed: the same findings, 54
    core-seconds alone against 65 with the Python parser. One process: beside the other tests
    the cores are busy anyway, and a second process only adds its start (76 core-seconds in
    two alone; 92 in two during a run)."""
    return background.spawn(
        "sqlfluff",
        [sys.executable, "-m", "sqlfluff", "lint", "models", "macros",
         "--disable-progress-bar", "--nocolor", "--processes", "1"],
        env=environ, cwd=ROOT, timeout=1800,
    )  # fmt: skip


# CPU for a minute that the Spark tests leave idle: it runs beside them, at a low priority.
background.register("sqlfluff", start_sqlfluff, needs_jvm=False)


@pytest.mark.waits_for("sqlfluff")
def test_dbt_sql_is_sqlfluff_clean():
    linted = background.result("sqlfluff")
    assert linted.returncode == 0, linted.stdout[-6000:] + linted.stderr[-2000:]
