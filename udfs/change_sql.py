"""UNDO and REDO scripts from ``marts.fct_change_sql`` (``logmart sql undo|redo``).

A script is the statements of the chosen committed changes of one source system and log
stream (one database's log, every capture of it: a transaction split by a cut between two
captures is one transaction): REDO in commit order, UNDO in the reverse order, each
transaction under a comment line, a change without a statement as a comment saying why.
Nothing is committed: the script ends with a reminder to review it and COMMIT.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO

from udfs.errors import LogmartError

TABLE = "marts.fct_change_sql"
# the changes Db2 made itself (RI constraints, triggers, temporal history tables): a column of
# fct_change_sql and fct_changes alike, so no query needs a subquery on the fct_changes view
GENERATED = "generated_by is not null"
# the changes with who made them (authid, plan, connection: columns of fct_changes only)
CHANGES = "marts.fct_changes"


@dataclass(frozen=True)
class Selection:
    """Which committed changes: one transaction, or a window of commit times or positions
    (closed: both ends included); narrowed to one source system and log stream, and by the
    filters a DBA uses (tables, authid, plan, connection, operation, transactions left out).
    `udfs.backout` checks a selection and describes it in a script's header."""

    transaction: str | None = None
    since: dt.datetime | None = None
    from_position: str | None = None
    source_system: str | None = None
    log_stream: str | None = None
    until: dt.datetime | None = None
    to_position: str | None = None
    tables: tuple[str, ...] = ()  # 'SCHEMA.TABLE'
    authid: str | None = None
    plan: str | None = None
    connection: str | None = None
    operations: tuple[str, ...] = ()
    exclude_transactions: tuple[str, ...] = ()
    # changes Db2 made itself (fct_changes.generated_by: RI, triggers, temporal history) are
    # made again by the target's own constraints and triggers: left out unless asked for
    include_generated: bool = False

    def where(self, who_joined: str | None = None) -> str:
        """The condition on marts.fct_change_sql (or marts.fct_changes) of the selection.
        The filters on who made a change are an IN subquery, which Spark allows in a WHERE
        clause only; a query that joins :meth:`who_changes` instead names its column in
        `who_joined`, and the condition holds in a SELECT list too."""
        conditions = [*self._window(), *self._filters(who_joined)]
        if not self.include_generated:
            conditions.append(f"not ({GENERATED})")
        if self.source_system is not None:
            conditions.append(f"source_system = {sql_string(self.source_system)}")
        if self.log_stream is not None:
            conditions.append(f"log_stream = {sql_string(self.log_stream)}")
        return " and ".join(conditions) or "true"

    def window_where(self) -> str:
        """The condition of the window alone (and the log), without the filters: what the
        filters left out is the difference."""
        return Selection(
            self.transaction,
            self.since,
            self.from_position,
            self.source_system,
            self.log_stream,
            self.until,
            self.to_position,
            include_generated=True,
        ).where()

    def _window(self) -> list[str]:
        conditions = []
        if self.transaction is not None:
            conditions.append(f"transaction_id = {sql_string(self.transaction)}")
        if self.since is not None:
            conditions.append(f"commit_ts >= timestamp {sql_string(self.since.isoformat(' '))}")
        if self.until is not None:
            conditions.append(f"commit_ts <= timestamp {sql_string(self.until.isoformat(' '))}")
        if self.from_position is not None:
            conditions.append(f"commit_position >= {sql_string(self.from_position)}")
        if self.to_position is not None:
            conditions.append(f"commit_position <= {sql_string(self.to_position)}")
        return conditions

    def _filters(self, who_joined: str | None = None) -> list[str]:
        conditions = []
        if self.tables:
            names = ", ".join(sql_string(table) for table in self.tables)
            conditions.append(f"concat(table_schema, '.', table_name) in ({names})")
        if self.operations:
            names = ", ".join(sql_string(operation) for operation in self.operations)
            conditions.append(f"operation in ({names})")
        if self.exclude_transactions:
            conditions.append(self.not_excluded())
        who = self._who()
        if who and who_joined is not None:
            conditions.append(f"{who_joined} is not null")
        elif who:
            conditions.append(f"change_id in (select change_id from {CHANGES} where {who})")
        return conditions

    def not_excluded(self) -> str:
        """The condition that leaves out the --exclude-transaction transactions ('true' when
        there are none)."""
        if not self.exclude_transactions:
            return "true"
        names = ", ".join(sql_string(txn) for txn in self.exclude_transactions)
        return f"transaction_id not in ({names})"

    def _who(self) -> str:
        """The condition on who made the change (authid, plan, connection: in fct_changes
        only); empty without those filters."""
        return " and ".join(
            f"{column} = {sql_string(value)}"
            for column, value in (
                ("authid", self.authid),
                ("plan_name", self.plan),
                ("connection_id", self.connection),
            )
            if value is not None
        )

    def who_changes(self) -> str | None:
        """A query of the change ids (column `who_change_id`, each once) that the filters on
        who made a change select, to join on `change_id`; None without those filters."""
        who = self._who()
        if not who:
            return None
        return f"select distinct change_id as who_change_id from {CHANGES} where {who}"

    def describe(self) -> str:
        if self.transaction is not None:
            return f"transaction {self.transaction}"
        parts = []
        if self.since is not None or self.until is not None:
            parts.append(
                "committed "
                + " ".join(
                    text
                    for text in (
                        self.since and f"from {self.since.isoformat(' ')}",
                        self.until and f"until {self.until.isoformat(' ')}",
                    )
                    if text
                )
            )
        if self.from_position is not None or self.to_position is not None:
            parts.append(
                "committed "
                + " ".join(
                    text
                    for text in (
                        self.from_position and f"from position {self.from_position}",
                        self.to_position and f"to position {self.to_position}",
                    )
                    if text
                )
            )
        return "transactions " + (", ".join(parts) or "of the whole log")

    def filters(self) -> list[str]:
        """The filters as the options that give them, for a script's header."""
        named = [f"--table {table}" for table in self.tables]
        for option, value in (
            ("--authid", self.authid),
            ("--plan", self.plan),
            ("--connection", self.connection),
        ):
            if value is not None:
                named.append(f"{option} {value}")
        named += [f"--operation {operation}" for operation in self.operations]
        named += [f"--exclude-transaction {txn}" for txn in self.exclude_transactions]
        if self.include_generated:
            named.append("--include-generated")
        return named

    def in_log(self, source_system: str, log_stream: str) -> Selection:
        """The same selection in one source system and log stream."""
        return replace(self, source_system=source_system, log_stream=log_stream)


def sql_string(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def log_stream_of(capture: str) -> str:
    """The log stream a capture folder is part of: its first folder (README, Sources)."""
    return capture.split("/", 1)[0]


@dataclass(frozen=True)
class Log:
    """The one log a selection is in, and what the selection holds there."""

    source_system: str
    log_stream: str
    captures: list[str]
    dialect: str
    changes: int
    transactions: int
    warnings: list[str]


def one_log(spark: Any, selection: Selection) -> Log:
    """The source system and log stream the selection is in (exactly one), its captures and
    dialect, the number of changes and transactions, and the distinct warnings of their
    statements."""
    found = spark.sql(
        "select source_system, log_stream, array_sort(collect_set(capture)) as captures, "
        "first(sql_dialect) as sql_dialect, "
        "count(*) as changes, count(distinct transaction_id) as transactions, "
        "array_sort(array_distinct(flatten(collect_list(statement_warnings)))) as warnings "
        f"from {TABLE} where {selection.where()} group by source_system, log_stream "
        "order by source_system, log_stream"
    ).collect()
    if len(found) != 1:
        raise _not_one_log(selection, [(row.source_system, row.log_stream) for row in found])
    row = found[0]
    return Log(
        row.source_system,
        row.log_stream,
        list(row.captures),
        row.sql_dialect,
        row.changes,
        row.transactions,
        list(row.warnings),
    )


def _not_one_log(selection: Selection, logs: Sequence[tuple[str, str]]) -> LogmartError:
    """The error of a selection in no log or in several (`logs`: source system, log stream)."""
    if not logs:
        hint = ""
        if selection.since is not None:
            hint = " (sources that log no commit times, like solidDB, need --from-position)"
        filters = selection.filters()
        where = f" with {' '.join(filters)}" if filters else ""
        return LogmartError(f"no committed change in {selection.describe()}{where}{hint}")
    named = ", ".join(f"--source {system} --stream {stream}" for system, stream in sorted(logs))
    return LogmartError(
        f"{selection.describe()} is in more than one log stream; choose one with {named}"
    )


class _Tally:
    """What a script's header says of its rows (the `Log` of `one_log`), counted as they
    stream by: one query gives both the statements and the header."""

    def __init__(self) -> None:
        self.logs: dict[tuple[str, str], None] = {}
        self.captures: set[str] = set()
        self.transactions: set[str] = set()
        self.warnings: set[str] = set()
        self.dialect: str | None = None
        self.changes = 0

    def counted(self, rows: Iterator[Any]) -> Iterator[Any]:
        for row in rows:
            self.logs[(row.source_system, row.log_stream)] = None
            if len(self.logs) > 1:
                continue  # an error once every row is seen (it names every log)
            if self.changes == 0:
                self.dialect = row.sql_dialect
            self.changes += 1
            self.captures.add(row.capture)
            self.transactions.add(row.transaction_id)
            self.warnings.update(row.statement_warnings or ())
            yield row

    def log(self, selection: Selection) -> Log:
        if len(self.logs) != 1:
            raise _not_one_log(selection, list(self.logs))
        ((source_system, log_stream),) = self.logs
        return Log(
            source_system,
            log_stream,
            sorted(self.captures),
            self.dialect or "",
            self.changes,
            len(self.transactions),
            sorted(self.warnings),
        )


# statements held in memory up to this size, then in a temporary file, until the header
# (counted from the same rows) is written before them
SPOOL_BYTES = 16 * 1024 * 1024


def write_script(
    spark: Any,
    direction: str,
    selection: Selection,
    out: TextIO,
    header: Sequence[str] = (),
    later_changes: Mapping[str, Sequence[str]] | None = None,
) -> int:
    """Write the UNDO or REDO script of `selection` to `out`; returns the number of changes.

    `header`: more comment lines for the top (udfs.backout: what the script covers);
    `later_changes`: change id -> the later changes its statement would undo over (a backout
    forced over conflicts), each written as a comment above that statement."""
    if direction not in ("undo", "redo"):
        raise ValueError(direction)
    order = "asc" if direction == "redo" else "desc"
    # one query: the rows of the statements are counted for the header as they stream by
    rows = spark.sql(
        f"select source_system, log_stream, capture, sql_dialect, change_id, transaction_id, "
        f"commit_position, commit_ts, operation, table_schema, table_name, "
        f"{direction}_sql as statement, statement_warnings "
        f"from {TABLE} where {selection.where()} order by source_system, log_stream, "
        f"commit_position {order}, transaction_id {order}, change_seq {order}"
    ).toLocalIterator()
    tally = _Tally()
    with tempfile.SpooledTemporaryFile(SPOOL_BYTES, "w+", encoding="utf-8") as statements:
        for line in _statements(tally.counted(rows), direction, later_changes or {}):
            statements.write(line + "\n")
        log = tally.log(selection)
        what = "backs out" if direction == "undo" else "applies again"
        out.write(
            f"-- logmart {direction.upper()} script ({log.dialect}): {what} {log.changes} "
            f"change(s) of {log.transactions} transaction(s), {selection.describe()}\n"
            f"-- source {log.source_system}, log stream {log.log_stream} (capture(s) "
            f"{', '.join(log.captures)}); from {TABLE}\n"
        )
        for line in header:
            out.write(f"-- {line}\n")
        for warning in log.warnings:
            out.write(f"-- note: {warning}\n")
        statements.seek(0)
        shutil.copyfileobj(statements, out)
    out.write("-- end: review the statements above, then COMMIT (or ROLLBACK)\n")
    return log.changes


def _statements(
    rows: Iterator[Any], direction: str, later_changes: Mapping[str, Sequence[str]]
) -> Iterator[str]:
    current = None
    for row in rows:
        if row.transaction_id != current:
            current = row.transaction_id
            when = f" at {row.commit_ts.isoformat(' ')}" if row.commit_ts else ""
            yield f"\n-- transaction {current}, committed at position {row.commit_position}{when}"
        for later in later_changes.get(row.change_id, ()):
            yield f"-- CONFLICT (--force): {later}"
        if row.statement is None:
            why = "; ".join(row.statement_warnings) or "no statement"
            yield f"-- no {direction.upper()} for {row.operation} {row.change_id}: {why}"
        else:
            yield row.statement
