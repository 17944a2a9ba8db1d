"""The project's own generic dbt tests (tests/dbt/generic), their SQL run on Spark: the body of
the `{% test %}` block rendered with jinja as dbt renders it, over a small view."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest
from pyspark.sql import SparkSession

from udfs.sources import dbt_vars

pytestmark = pytest.mark.spark

GENERIC = Path(__file__).resolve().parent / "dbt" / "generic"


def _test_sql(name: str, **arguments: object) -> str:
    text = (GENERIC / f"{name}.sql").read_text()
    body = re.search(r"{% test [^%]+%}(.*){% endtest %}", text, re.S)
    assert body, f"{name}.sql has no test block"
    return jinja2.Template(body.group(1)).render(**arguments)


def test_accepted_values_by_source_fails_on_a_kind_of_another_source(spark: SparkSession):
    rows = [
        ("db2zos", "control"),  # Log Master's own kind
        ("db2zos", "log"),  # a Db2 LUW kind: not Log Master's
        ("db2luw", "log"),
        ("db2luw", "snapshot_side"),  # every source's snapshots folder
        ("soliddb", "other"),
        ("soliddb", None),  # a null passes, as in accepted_values
        ("oracle", "data"),  # a source not registered
    ]
    spark.createDataFrame(rows, "source_system string, file_kind string").createOrReplaceTempView(
        "files_to_check"
    )
    sql = _test_sql(
        "accepted_values_by_source",
        model="files_to_check",
        column_name="file_kind",
        values_by_source=dbt_vars()["logmart_file_kinds"],
    )
    failing = {(r.source_system, r.value_field) for r in spark.sql(sql).collect()}
    assert failing == {("db2zos", "log"), ("oracle", "data")}


def test_not_null_columns_fails_once_per_column_with_nulls(spark: SparkSession):
    rows = [(1, None, "x"), (2, None, None), (3, "b", "y")]
    spark.createDataFrame(rows, "a int, b string, c string").createOrReplaceTempView(
        "rows_to_check"
    )
    sql = _test_sql("not_null_columns", model="rows_to_check", columns=["a", "b", "c"])
    failing = {(r.column_name, r.null_rows) for r in spark.sql(sql).collect()}
    assert failing == {("b", 2), ("c", 1)}
    # the columns without a null pass: no row
    sql = _test_sql("not_null_columns", model="rows_to_check", columns=["a"])
    assert spark.sql(sql).collect() == []
