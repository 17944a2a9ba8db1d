"""UNDO and REDO scripts from ``marts.fct_change_sql`` (``logmart sql undo|redo``).

A script is the statements of the chosen committed changes of one source system and capture
(one database's log): REDO in commit order, UNDO in the reverse order, each transaction under
a comment line, a change without a statement as a comment saying why. Nothing is committed:
the script ends with a reminder to review it and COMMIT.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from udfs.errors import LogmartError

TABLE = "marts.fct_change_sql"


@dataclass(frozen=True)
class Selection:
    """Which committed changes: one transaction, or every one committed since a time or from
    a commit position; narrowed to one source system and capture."""

    transaction: str | None = None
    since: dt.datetime | None = None
    from_position: str | None = None
    source_system: str | None = None
    capture: str | None = None

    def where(self) -> str:
        conditions = []
        if self.transaction is not None:
            conditions.append(f"transaction_id = {sql_string(self.transaction)}")
        if self.since is not None:
            conditions.append(f"commit_ts >= timestamp {sql_string(self.since.isoformat(' '))}")
        if self.from_position is not None:
            conditions.append(f"commit_position >= {sql_string(self.from_position)}")
        if self.source_system is not None:
            conditions.append(f"source_system = {sql_string(self.source_system)}")
        if self.capture is not None:
            conditions.append(f"capture = {sql_string(self.capture)}")
        return " and ".join(conditions) or "true"

    def describe(self) -> str:
        if self.transaction is not None:
            return f"transaction {self.transaction}"
        if self.since is not None:
            return f"transactions committed since {self.since.isoformat(' ')}"
        return f"transactions committed from position {self.from_position}"


def sql_string(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _one_log(spark: Any, selection: Selection) -> tuple[str, str, str, int, int, list[str]]:
    """The source system, capture and dialect the selection is in (exactly one), the number of
    changes and transactions, and the distinct warnings of their statements."""
    found = spark.sql(
        "select source_system, capture, first(sql_dialect) as sql_dialect, "
        "count(*) as changes, count(distinct transaction_id) as transactions, "
        "array_sort(array_distinct(flatten(collect_list(statement_warnings)))) as warnings "
        f"from {TABLE} where {selection.where()} group by source_system, capture "
        "order by source_system, capture"
    ).collect()
    if not found:
        hint = ""
        if selection.since is not None:
            hint = " (sources that log no commit times, like solidDB, need --from-position)"
        raise LogmartError(f"no committed change in {selection.describe()}{hint}")
    if len(found) > 1:
        logs = ", ".join(f"--source {row.source_system} --capture {row.capture}" for row in found)
        raise LogmartError(
            f"{selection.describe()} is in more than one log; choose one with {logs}"
        )
    row = found[0]
    return (
        row.source_system,
        row.capture,
        row.sql_dialect,
        row.changes,
        row.transactions,
        list(row.warnings),
    )


def write_script(spark: Any, direction: str, selection: Selection, out: TextIO) -> int:
    """Write the UNDO or REDO script of `selection` to `out`; returns the number of changes."""
    if direction not in ("undo", "redo"):
        raise ValueError(direction)
    source, capture, dialect, changes, transactions, warnings = _one_log(spark, selection)
    narrowed = Selection(
        selection.transaction, selection.since, selection.from_position, source, capture
    )
    order = "asc" if direction == "redo" else "desc"
    rows = spark.sql(
        f"select change_id, transaction_id, commit_position, commit_ts, operation, "
        f"table_schema, table_name, {direction}_sql as statement, statement_warnings "
        f"from {TABLE} where {narrowed.where()} "
        f"order by commit_position {order}, transaction_id {order}, change_seq {order}"
    ).toLocalIterator()
    what = "backs out" if direction == "undo" else "applies again"
    out.write(
        f"-- logmart {direction.upper()} script ({dialect}): {what} {changes} change(s) of "
        f"{transactions} transaction(s), {selection.describe()}\n"
        f"-- source {source}, capture {capture}; from {TABLE}\n"
    )
    for warning in warnings:
        out.write(f"-- note: {warning}\n")
    for line in _statements(rows, direction):
        out.write(line + "\n")
    out.write("-- end: review the statements above, then COMMIT (or ROLLBACK)\n")
    return changes


def _statements(rows: Iterator[Any], direction: str) -> Iterator[str]:
    current = None
    for row in rows:
        if row.transaction_id != current:
            current = row.transaction_id
            when = f" at {row.commit_ts.isoformat(' ')}" if row.commit_ts else ""
            yield f"\n-- transaction {current}, committed at position {row.commit_position}{when}"
        if row.statement is None:
            why = "; ".join(row.statement_warnings) or "no statement"
            yield f"-- no {direction.upper()} for {row.operation} {row.change_id}: {why}"
        else:
            yield row.statement
