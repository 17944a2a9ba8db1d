"""The tree is clean: ruff (lint and format) on the Python, sqlfluff on the dbt SQL.

Part of the suite, so the README's one test command and `.ci/run` check style too.
"""

from __future__ import annotations

import json
import os
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
    two alone; 92 in two during a run). Through tests/sqlfluff_lint.py, which compiles each
    Jinja template once instead of once per file linted: the same findings, 50.9 s alone
    against 71.9 s."""
    return background.spawn(
        "sqlfluff",
        [sys.executable, "-m", "tests.sqlfluff_lint", "lint", "models", "macros",
         "--disable-progress-bar", "--nocolor", "--processes", "1"],
        env=environ, cwd=ROOT, timeout=1800,
    )  # fmt: skip


# CPU for a minute that the Spark tests leave idle: it runs beside them, at a low priority.
background.register("sqlfluff", start_sqlfluff, needs_jvm=False)


@pytest.mark.waits_for("sqlfluff")
def test_dbt_sql_is_sqlfluff_clean():
    linted = background.result("sqlfluff")
    said = linted.stdout[-6000:] + linted.stderr[-2000:]
    assert linted.returncode == 0, said
    # a file sqlfluff skips (over its size limit, .sqlfluff) is only a warning, not a finding
    assert "Skipping" not in linted.stdout + linted.stderr, said


def test_the_lint_wrapper_finds_what_sqlfluff_finds(tmp_path: Path) -> None:
    """tests/sqlfluff_lint.py keeps compiled templates between files: two files that call the
    same macro are each linted against their own text (a finding at its own line, none in the
    clean one), as sqlfluff alone reports them."""
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "pick.sql").write_text(
        "{% macro pick(c) %}{{ c }} as picked{% endmacro %}\n"
    )
    (tmp_path / ".sqlfluff").write_text(
        "[sqlfluff]\ndialect = sparksql\ntemplater = jinja\nrules = CP01\n"
        "[sqlfluff:templater:jinja]\nload_macros_from_path = macros\n"
    )
    (tmp_path / "clean.sql").write_text("select {{ pick('a') }}\nfrom t\n")
    (tmp_path / "shouting.sql").write_text("select {{ pick('a') }}\nFROM t\n")
    found = {}
    for module in ("sqlfluff", "tests.sqlfluff_lint"):
        linted = subprocess.run(
            [sys.executable, "-m", module, "lint", "clean.sql", "shouting.sql", "--format", "json"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert linted.returncode == 1, linted.stderr[-2000:]
        found[module] = {
            Path(f["filepath"]).name: [(v["code"], v["start_line_no"]) for v in f["violations"]]
            for f in json.loads(linted.stdout)
        }
    assert found["tests.sqlfluff_lint"] == found["sqlfluff"]
    assert found["sqlfluff"] == {"clean.sql": [], "shouting.sql": [("CP01", 2)]}


def test_a_kept_template_is_compiled_again_for_other_delimiters() -> None:
    from jinja2 import Environment

    from tests.sqlfluff_lint import keep_compiled_templates

    before = Environment.compile
    try:
        keep_compiled_templates()
        source = "{{ 1 }}<< 2 >>"
        assert Environment().from_string(source).render() == "1<< 2 >>"
        other = Environment(variable_start_string="<<", variable_end_string=">>")
        assert other.from_string(source).render() == "{{ 1 }}2"
        assert Environment().from_string(source).render() == "1<< 2 >>"
    finally:
        Environment.compile = before
