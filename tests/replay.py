"""Replaying committed changes from marts.fct_changes onto empty tables, for oracle tests.

The generators write the final table contents they expect (truth/<source>/tables.json); the
marts must reproduce them exactly when their committed changes are applied in commit order.
Rows are matched by their full before image, so the replay needs no key and checks every
column of every before image on the way. A row image is a map: a column it does not hold (a
row last written before an ALTER TABLE ADD COLUMN) reads as NULL, so rows compare on the
union of their columns with absent values null (`with_columns`).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pyspark.sql import SparkSession


def replay(
    spark: SparkSession,
    source_system: str,
    up_to_position: str | None = None,
    exclude: tuple[str, ...] = (),
    log_stream: str | None = None,
) -> dict[str, list[dict]]:
    """Final rows per 'SCHEMA.TABLE' after applying the source's committed changes in order
    (only those committed at or before `up_to_position` when given: the rows as of then;
    without the transactions `exclude` names; of one log stream when given)."""
    until = "" if up_to_position is None else f" and commit_position <= '{up_to_position}'"
    if log_stream is not None:
        until += f" and log_stream = '{log_stream}'"
    if exclude:
        until += " and transaction_id not in (" + ", ".join(f"'{t}'" for t in exclude) + ")"
    changes = spark.sql(
        "select table_schema, table_name, operation, before_image, after_image "
        "from marts.fct_changes "
        f"where source_system = '{source_system}' and disposition = 'committed'{until} "
        "order by commit_position, change_seq"
    ).toLocalIterator()
    tables: dict[str, list[dict]] = {}
    for change in changes:
        rows = tables.setdefault(f"{change.table_schema}.{change.table_name}", [])
        before = dict(change.before_image) if change.before_image is not None else None
        after = dict(change.after_image) if change.after_image is not None else None
        if change.operation == "truncate":
            rows.clear()
        elif change.operation == "insert":
            rows.append(after)
        elif change.operation == "delete":
            del rows[_row_index(rows, before)]
        elif change.operation == "update":
            rows[_row_index(rows, before)] = after
        else:
            raise AssertionError(f"unexpected operation {change.operation!r}")
    return tables


def _row_index(rows: list[dict], before: dict) -> int:
    """Where the row the before image shows is, comparing on the columns of both (absent =
    null: the update of a row written before an ADD COLUMN logs the new column as NULL)."""
    for index, row in enumerate(rows):
        if with_columns(row, before) == with_columns(before, row):
            return index
    raise ValueError(f"{before} is not in the table")


def with_columns(row: dict, *others: dict) -> dict:
    """``row`` with every column of ``others`` it lacks, as null (a map's absent key)."""
    filled = {column: None for other in others for column in other}
    filled.update(row)
    return filled


def truth_tables(raw: Path, source_system: str) -> dict[str, list[dict]]:
    """The generator's expected final rows per 'SCHEMA.TABLE'."""
    truth = json.loads((raw / "truth" / source_system / "tables.json").read_text())
    return {name: table["rows"] for name, table in truth.items()}


def as_multiset(rows: list[dict], columns: frozenset[str] | set[str] = frozenset()) -> Counter:
    """The rows as a multiset; with ``columns``, each row filled up to them with nulls."""
    filler = dict.fromkeys(columns)
    return Counter(json.dumps(with_columns(row, filler), sort_keys=True) for row in rows)


def columns_of(*tables: list[dict]) -> set[str]:
    """Every column of every row of ``tables``."""
    return {column for rows in tables for row in rows for column in row}
