"""dbt Jinja (refs, macros) compiled against the project, for a test to run in Spark."""

from __future__ import annotations

from pathlib import Path


def compiled(warehouse: Path, sql: str) -> str:
    """`sql` compiled by `dbt compile --inline` on `warehouse`'s profile, as Spark runs it:
    an ephemeral model's ref becomes its CTE."""
    from dbt.cli.main import dbtRunner

    from udfs.dbt_runner import dbt_args, project_dir

    result = dbtRunner().invoke(dbt_args(["compile", "--inline", sql], warehouse, project_dir()))
    assert result.success, result.exception
    return result.result.results[0].node.compiled_code
