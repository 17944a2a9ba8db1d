"""The project's own generic dbt tests (tests/dbt/generic), their SQL run on Spark: the body of
the `{% test %}` block rendered with jinja as dbt renders it, over a small view; and the
singular data checks of a user's build (tests/dbt/*.sql), over small views named as the models
they read."""

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


SINGULAR = GENERIC.parent


def _check_sql(name: str, sources: list[str]) -> str:
    """A singular data check (tests/dbt/NAME.sql) rendered as dbt would: `ref` names the view
    of the same name, `logmart_sources()` returns `sources`."""
    text = (SINGULAR / f"{name}.sql").read_text()
    return jinja2.Template(text).render(
        config=lambda **_: "", ref=lambda model: model, logmart_sources=lambda: sources
    )


def test_records_reconcile_fails_on_each_kind_of_problem(spark: SparkSession):
    """`assert_records_reconcile` (a check of every user's build) fails with a row per problem,
    naming its file and record; a record read once and accounted once, decoded or quarantined,
    passes, and so does a file whose counts add up."""
    read = {
        "logmaster": [("f1", 0), ("f1", 10), ("f1", 20), ("f1", 30), ("f1", 40), ("f1", None)],
        "soliddb": [("s1", 0), ("s1", 1)],
    }
    accounted = {
        "logmaster": [
            ("f1", 0, "change"),  # clean
            ("f1", 10, "quarantined"),  # clean
            ("f1", 20, "change"),  # decoded and quarantined
            ("f1", 20, "quarantined"),
            # f1 30: read, found nowhere
            ("f1", 40, "control"),  # two outcomes, neither a quarantine: counted once
            ("f1", 40, "change"),
            ("f1", None, "change"),  # no offset: nothing can match it
            ("f1", 50, "change"),  # never read
        ],
        "soliddb": [
            ("s1", 0, "change"),
            ("s1", 1, "catalog_event"),  # decoded twice and quarantined: both named
            ("s1", 1, "change"),
            ("s1", 1, "quarantined"),
            ("s2", 7, "quarantined"),  # never read
        ],
    }
    system = {"logmaster": "db2zos", "soliddb": "soliddb"}
    for source in read:
        spark.createDataFrame(
            [(system[source], f, o) for f, o in read[source]],
            "source_system string, source_file string, raw_offset bigint",
        ).createOrReplaceTempView(f"int_{source}_records_read")
        spark.createDataFrame(
            [(system[source], f, o, outcome) for f, o, outcome in accounted[source]],
            "source_system string, source_file string, raw_offset bigint, outcome string",
        ).createOrReplaceTempView(f"int_{source}_records_accounted")
    spark.createDataFrame(
        [("db2zos", "f1", 6, 5, 1), ("soliddb", "s1", 2, 2, 0), ("soliddb", "s3", 1, None, 0)],
        "source_system string, source_file string, records_read bigint, "
        "records_decoded bigint, records_quarantined bigint",
    ).createOrReplaceTempView("reconciliation")

    sql = _check_sql("assert_records_reconcile", ["logmaster", "soliddb"])
    failing = sorted(
        (
            (r.source_system, r.source_file, r.raw_offset, r.problem)
            for r in spark.sql(sql).collect()
        ),
        key=str,
    )
    assert failing == sorted(
        [
            # an offset that is null matches nothing, on either side
            ("db2zos", "f1", None, "record read but found in no output and not quarantined"),
            ("db2zos", "f1", None, "record found as change but never read"),
            ("db2zos", "f1", 20, "record both decoded (change) and quarantined"),
            ("db2zos", "f1", 30, "record read but found in no output and not quarantined"),
            ("db2zos", "f1", 50, "record found as change but never read"),
            ("soliddb", "s1", 1, "record both decoded (catalog_event, change) and quarantined"),
            ("soliddb", "s2", 7, "record found as quarantined but never read"),
            ("soliddb", "s3", None, "records read 1 != decoded null + quarantined 0"),
        ],
        key=str,
    )
