"""Backing out safely (`logmart sql`): the selection checked, later work found, the header.

Backout integrity, as Log Master's Backout Integrity report and Log Analyzer's subsequent-update
report: an UNDO sets each row back by its key, whatever happened to it afterwards, so a later
committed change to a row the selection touched would be silently destroyed. `conflicts` finds
every committed change after the selection (same source system and log stream, commit order:
commit position, transaction, change sequence) that is not itself selected and

- changes a row the selection touched: the same table and the same row, found by the table's
  key (`fct_changes.key_columns`) in the before or after image, else by the whole image;
- empties a table the selection touched (a truncate or mass delete: operation `truncate`,
  partition-level ones included, whatever their key range); or
- changes a table after a truncate the selection backs out (its UNDO inserts rows again).

It is a query the CLI runs for the selection, not a table: a table over every pair of
changes to the same row would be built on every `logmart build` (issue 16: build time) for
selections nobody has made yet, while the selection's query joins its few changes to the later
changes of the same tables only (an equality join on the row). For BI the same rules are the
view `marts.rpt_backout_conflicts` (models/marts/audit, macro backout_row_identity: keep it and
`row_identity` below saying the same), which the build does not compute.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, TextIO

from udfs.change_sql import CHANGES, GENERATED, TABLE, Log, Selection, one_log, sql_string
from udfs.errors import LogmartError

CONFLICTS_EXIT = 3  # `logmart sql undo` refused: later work touches the same rows


# ---------------------------------------------------------------------------------------------
# The selection, checked before anything is written


def check_selection(selection: Selection) -> None:
    """Refuse a selection that cannot mean anything, before Spark starts."""
    window = (selection.since, selection.until, selection.from_position, selection.to_position)
    if selection.transaction is not None and any(value is not None for value in window):
        raise LogmartError(
            "--transaction names one transaction: leave out --since/--until/--from-position/"
            "--to-position, or give the window without --transaction"
        )
    if selection.transaction is None and all(value is None for value in window):
        raise LogmartError(
            "choose the changes: --transaction ID, or a window (--since/--until by commit "
            "time, --from-position/--to-position by commit position)"
        )
    if selection.since and selection.until and selection.until < selection.since:
        raise LogmartError(
            f"--until {selection.until.isoformat(' ')} is before --since "
            f"{selection.since.isoformat(' ')}: give the window's start first"
        )
    if (
        selection.from_position is not None
        and selection.to_position is not None
        and selection.to_position < selection.from_position
    ):
        raise LogmartError(
            f"--to-position {selection.to_position} is before --from-position "
            f"{selection.from_position}: give the window's start first"
        )
    for table in selection.tables:
        schema, _, name = table.rpartition(".")
        if not schema or not name:
            raise LogmartError(f"--table {table!r}: give the table as SCHEMA.TABLE")
    if selection.transaction is not None and selection.transaction in (
        selection.exclude_transactions
    ):
        raise LogmartError(
            f"--exclude-transaction {selection.transaction} leaves out the one transaction "
            "--transaction selects"
        )


def check_tables(spark: Any, selection: Selection) -> None:
    """Each --table is a table of the chosen log (of any log when none is chosen yet)."""
    if not selection.tables:
        return
    names = ", ".join(sql_string(table) for table in selection.tables)
    conditions = [f"concat(table_schema, '.', table_name) in ({names})"]
    if selection.source_system is not None:
        conditions.append(f"source_system = {sql_string(selection.source_system)}")
    if selection.log_stream is not None:
        conditions.append(f"log_stream = {sql_string(selection.log_stream)}")
    found = {
        row.name
        for row in spark.sql(
            "select distinct concat(table_schema, '.', table_name) as name "
            f"from {TABLE} where {' and '.join(conditions)}"
        ).collect()
    }
    missing = [table for table in selection.tables if table not in found]
    if missing:
        where = " ".join(
            text
            for text in (
                selection.source_system and f"source {selection.source_system}",
                selection.log_stream and f"log stream {selection.log_stream}",
            )
            if text
        )
        raise LogmartError(
            f"--table {', '.join(missing)}: no committed change of that table in "
            f"{where or 'any log stream'} (tables are SCHEMA.TABLE, as in fct_changes, "
            "upper-case for Db2)"
        )


# ---------------------------------------------------------------------------------------------
# Later work a backout would destroy


@dataclass(frozen=True)
class Conflict:
    """A committed change after the selection that its UNDO would undo over."""

    change_id: str  # the selected change
    operation: str
    table: str
    transaction_id: str
    later_change_id: str
    later_operation: str
    later_transaction_id: str
    later_commit_position: str
    later_commit_ts: dt.datetime | None
    reason: str

    def later(self) -> str:
        """The later change, named for a script comment or the conflict list."""
        when = f" at {self.later_commit_ts.isoformat(' ')}" if self.later_commit_ts else ""
        return (
            f"later {self.later_operation} {self.later_change_id} of {self.table}, transaction "
            f"{self.later_transaction_id} committed at position {self.later_commit_position}"
            f"{when}: {self.reason}"
        )

    def describe(self) -> str:
        return (
            f"{self.operation} {self.change_id} (transaction {self.transaction_id}) <- "
            f"{self.later()}"
        )


def row_identity(image: str) -> str:
    """SQL: the row an image shows, as text: 'key {...}' by the table's key columns when the
    image holds them all, else 'row {...}' by every column of the image (null for no image)."""
    keyed = f"size(key_columns) > 0 and forall(key_columns, k -> map_contains_key({image}, k))"
    columns = f"array_sort(map_keys({image}))"
    return (
        f"case when {image} is null then null "
        f"when {keyed} then concat('key ', to_json(map_from_arrays(key_columns, "
        f"transform(key_columns, k -> {image}[k])))) "
        f"else concat('row ', to_json(map_from_arrays({columns}, "
        f"transform({columns}, k -> {image}[k])))) end"
    )


def conflicts_sql(selection: Selection, changes: str = CHANGES) -> str:
    """SQL of the conflicts of `selection` (in one source system and log stream)."""
    if selection.source_system is None or selection.log_stream is None:
        raise ValueError("a backout integrity check needs one source system and log stream")
    columns = (
        "change_id, table_schema, table_name, transaction_id, commit_position, change_seq, "
        "commit_ts, operation, change_kind, "
        f"{row_identity('before_image')} as before_row, {row_identity('after_image')} as after_row"
    )
    rows = "*, explode(array_distinct(filter(array(before_row, after_row), x -> x is not null)))"
    pair = (
        "s.change_id, s.operation, s.table_schema, s.table_name, s.transaction_id, "
        "s.commit_position, s.change_seq, l.change_id as later_change_id, "
        "l.operation as later_operation, l.transaction_id as later_transaction_id, "
        "l.commit_position as later_commit_position, l.change_seq as later_change_seq, "
        "l.commit_ts as later_commit_ts"
    )
    same_table = "s.table_schema = l.table_schema and s.table_name = l.table_name"
    # after in commit order: commit position, then transaction, then change sequence
    later_than = (
        "later_commit_position > commit_position or (later_commit_position = commit_position "
        "and (later_transaction_id > transaction_id or (later_transaction_id = transaction_id "
        "and later_change_seq > change_seq)))"
    )
    return f"""
with selected as (
    select {columns} from {changes}
    where disposition = 'committed' and {selection.where()}
),
later as (
    select {columns} from {changes}
    where disposition = 'committed'
        and source_system = {sql_string(selection.source_system)}
        and log_stream = {sql_string(selection.log_stream)}
        and commit_position >= (select min(commit_position) from selected)
        and concat(table_schema, '.', table_name) in
            (select concat(table_schema, '.', table_name) from selected)
        and change_id not in (select change_id from selected)
),
selected_rows as (select {rows} as row_identity from selected),
later_rows as (select {rows} as row_identity from later),
pairs as (
    select {pair}, concat('changes the same row, ', s.row_identity) as reason
    from selected_rows s join later_rows l
        on {same_table} and s.row_identity = l.row_identity
    union all
    select {pair}, concat('empties the table (', l.change_kind, ')') as reason
    from selected s join later l on {same_table} and l.operation = 'truncate'
    union all
    select {pair}, 'changes the table after the truncate backed out' as reason
    from selected s join later l on {same_table} and s.operation = 'truncate'
)
select
    change_id, operation, concat(table_schema, '.', table_name) as table_name, transaction_id,
    later_change_id, later_operation, later_transaction_id, later_commit_position,
    later_commit_ts, array_join(array_sort(collect_set(reason)), '; ') as reason
from pairs p
where {later_than}
group by all
order by later_commit_position, later_transaction_id, later_change_id, change_id
"""


def conflicts(spark: Any, selection: Selection, changes: str = CHANGES) -> list[Conflict]:
    """Every later committed change the UNDO of `selection` would undo over, per pair of
    (selected change, later change), in the later changes' commit order."""
    return [
        Conflict(
            row.change_id,
            row.operation,
            row.table_name,
            row.transaction_id,
            row.later_change_id,
            row.later_operation,
            row.later_transaction_id,
            row.later_commit_position,
            row.later_commit_ts,
            row.reason,
        )
        for row in spark.sql(conflicts_sql(selection, changes)).collect()
    ]


LATEST_TRANSACTIONS = 20  # per log stream, on the report page


def latest_transactions_sql(last: int = LATEST_TRANSACTIONS, changes: str = CHANGES) -> str:
    """SQL: each log stream's `last` latest committed transactions with row changes, and the
    later committed transactions their UNDO would undo over (the rules of `conflicts_sql`, at
    the level of transactions: what `logmart sql undo --transaction T` would refuse). For the
    report page: a DBA sees which recent transactions can still be backed out on their own."""
    columns = (
        "source_system, log_stream, change_id, table_schema, table_name, transaction_id, "
        "commit_position, commit_ts, operation, change_kind, "
        f"{row_identity('before_image')} as before_row, {row_identity('after_image')} as after_row"
    )
    rows = "*, explode(array_distinct(filter(array(before_row, after_row), x -> x is not null)))"
    same_table = (
        "s.source_system = l.source_system and s.log_stream = l.log_stream "
        "and s.table_schema = l.table_schema and s.table_name = l.table_name"
    )
    later = (
        "l.transaction_id <> s.transaction_id and (l.commit_position > s.commit_position "
        "or (l.commit_position = s.commit_position and l.transaction_id > s.transaction_id))"
    )
    pair = (
        "s.source_system, s.log_stream, s.transaction_id, l.transaction_id as later_transaction_id"
    )
    return f"""
with committed as (
    select {columns} from {changes}
    where disposition = 'committed' and not ({GENERATED})
),
transactions as (
    select
        source_system, log_stream, transaction_id,
        max(commit_position) as commit_position, max(commit_ts) as commit_ts,
        count(*) as change_count,
        array_sort(collect_set(concat(table_schema, '.', table_name))) as tables_touched
    from committed
    group by source_system, log_stream, transaction_id
),
latest as (
    select * from (
        select
            *,
            row_number() over (
                partition by source_system, log_stream
                order by commit_position desc, transaction_id desc
            ) as recency
        from transactions
    )
    where recency <= {int(last)}
),
selected as (
    select committed.* from committed
    left semi join latest
        on committed.source_system = latest.source_system
        and committed.log_stream = latest.log_stream
        and committed.transaction_id = latest.transaction_id
),
later as (
    select committed.* from committed
    left semi join selected
        on committed.source_system = selected.source_system
        and committed.log_stream = selected.log_stream
        and committed.table_schema = selected.table_schema
        and committed.table_name = selected.table_name
),
selected_rows as (select {rows} as row_identity from selected),
later_rows as (select {rows} as row_identity from later),
pairs as (
    select {pair} from selected_rows s join later_rows l
        on {same_table} and s.row_identity = l.row_identity and {later}
    union
    select {pair} from selected s join later l
        on {same_table} and {later} and (l.operation = 'truncate' or s.operation = 'truncate')
),
conflicting as (
    select
        source_system, log_stream, transaction_id,
        array_sort(collect_set(later_transaction_id)) as later_transactions
    from pairs
    group by source_system, log_stream, transaction_id
)
select
    latest.source_system, latest.log_stream, latest.transaction_id, latest.commit_position,
    latest.commit_ts, latest.change_count, latest.tables_touched,
    coalesce(conflicting.later_transactions, array()) as later_transactions
from latest
left join conflicting
    on latest.source_system = conflicting.source_system
    and latest.log_stream = conflicting.log_stream
    and latest.transaction_id = conflicting.transaction_id
order by latest.source_system, latest.log_stream, latest.commit_position desc,
    latest.transaction_id desc
"""


def by_change(found: list[Conflict]) -> dict[str, list[str]]:
    """Change id -> its later changes, as script comments."""
    named: dict[str, list[str]] = defaultdict(list)
    for conflict in found:
        named[conflict.change_id].append(conflict.later())
    return dict(named)


# ---------------------------------------------------------------------------------------------
# What a script covers


def header(
    spark: Any,
    direction: str,
    selection: Selection,
    found: list[Conflict] | None,
) -> list[str]:
    """The header lines (without '-- ') that say what the script of `selection` (in one log)
    covers: window, filters, what was left out and why, the backout integrity check."""
    lines = [f"window: {selection.describe()}"]
    filters = selection.filters()
    lines.append("filters: " + (" ".join(filters) if filters else "none"))
    lines += _left_out(spark, direction, selection)
    lines += _completeness(spark, selection)
    if found is None:
        lines.append(
            "backout integrity: not checked (REDO applies the changes again: run it where the "
            "rows are as they were before them)"
        )
    elif not found:
        lines.append(
            "backout integrity: checked; no later committed change touches the rows or "
            "tables these changes touched"
        )
    else:
        transactions = len({conflict.later_transaction_id for conflict in found})
        lines.append(
            f"backout integrity: CONFLICTS, {len(found)} later committed change(s) of "
            f"{transactions} transaction(s) touch the same rows or tables; written anyway "
            "(--force): each affected statement has a CONFLICT comment above it"
        )
    return lines


def _left_out(spark: Any, direction: str, selection: Selection, table: str = TABLE) -> list[str]:
    """What the window holds that the script does not, and why: counted in one pass over the
    window (fct_change_sql is a view: each query of it analyses and runs its SQL again). Each
    change left out is counted under one reason: a change Db2 made itself inside a transaction
    left out by --exclude-transaction counts with that transaction."""
    who = selection.who_changes()
    joined = f" left join ({who}) as who on change_id = who.who_change_id" if who else ""
    selected = selection.where(who_joined="who.who_change_id" if who else None)
    # a null transaction id is not in an excluded transaction
    not_excluded = f"coalesce({selection.not_excluded()}, true)"
    generated = (
        "0" if selection.include_generated else f"count_if(({GENERATED}) and {not_excluded})"
    )
    excluded_counts = "".join(
        f", count_if(transaction_id = {sql_string(txn)}) as excluded_{i}"
        for i, txn in enumerate(selection.exclude_transactions)
    )
    (row,) = spark.sql(
        f"select count(*) as window_changes, count_if({selected}) as selected_changes, "
        f"count_if(({selected}) and {direction}_sql is null) as without_statement, "
        f"{generated} as generated_changes{excluded_counts} "
        f"from {table}{joined} where {selection.window_where()}"
    ).collect()
    lines = []
    excluded = {txn: row[f"excluded_{i}"] for i, txn in enumerate(selection.exclude_transactions)}
    for txn in selection.exclude_transactions:
        if excluded[txn]:
            lines.append(
                f"left out: transaction {txn}, {excluded[txn]} change(s) (--exclude-transaction)"
            )
        else:
            lines.append(f"left out: transaction {txn} (--exclude-transaction): not in the window")
    if row.generated_changes:
        lines.append(
            f"left out: {row.generated_changes} change(s) Db2 made itself (fct_changes."
            "generated_by: RI constraints, triggers, temporal history): the target's own "
            "constraints and triggers make them again (--include-generated keeps them)"
        )
    if row.window_changes > row.selected_changes:
        others = (
            row.window_changes
            - row.selected_changes
            - sum(excluded.values())
            - row.generated_changes
        )
        if others > 0:
            lines.append(
                f"left out: {others} other change(s) in the window that the filters do not select"
            )
    if row.without_statement:
        lines.append(
            f"left out: {row.without_statement} change(s) with no {direction.upper()} "
            "statement, each a comment below saying why"
        )
    if not lines:
        lines.append("left out: nothing")
    return lines


# Log Master's word on a transaction (fct_changes), and what the header says of it
COMPLETENESS = (
    (
        "incomplete_transaction",
        "WARNING: Log Master could not complete at least one log record of transaction(s) "
        "{ids} (INCOMPLETETRANS): their statements may lack values or changes; check them",
    ),
    (
        "incomplete_dependency",
        "WARNING: transaction(s) {ids} may depend on a transaction Log Master could not "
        "complete (INCOMPLETEDEP); check that one first",
    ),
    (
        "has_compensation",
        "note: transaction(s) {ids} hold compensation records (UORHASCOMP): the work Db2 undid "
        "in them (rollback to a savepoint, a reversed statement) is not committed and not here",
    ),
)
LISTED = 10  # transaction ids named in a header line before "and N more"


def _completeness(spark: Any, selection: Selection) -> list[str]:
    """A line per Log Master flag that a selected transaction carries."""
    flags = ", ".join(
        f"array_sort(collect_set(if({column}, transaction_id, null))) as {column}"
        for column, _ in COMPLETENESS
    )
    row = spark.sql(
        f"select {flags} from {CHANGES} where disposition = 'committed' and {selection.where()}"
    ).first()
    lines = []
    for column, text in COMPLETENESS:
        ids = list(row[column] or [])
        if ids:
            named = ", ".join(ids[:LISTED])
            if len(ids) > LISTED:
                named += f" and {len(ids) - LISTED} more"
            lines.append(text.format(ids=named))
    return lines


def prepare(
    spark: Any, direction: str, selection: Selection
) -> tuple[Selection, Log, list[Conflict] | None]:
    """The selection in its one log, the log, and (for an UNDO) its conflicts; raises a
    `LogmartError` for a selection of nothing or of a table not in the log."""
    check_tables(spark, selection)
    log = one_log(spark, selection)
    narrowed = selection.in_log(log.source_system, log.log_stream)
    if narrowed != selection:  # a table may be in another log than the one chosen
        check_tables(spark, narrowed)
    found = conflicts(spark, narrowed) if direction == "undo" else None
    return narrowed, log, found


def refuse_conflicts(found: list[Conflict], err: TextIO) -> int:
    """Print the conflict list of a refused UNDO to `err`; returns the exit status, 3."""
    transactions = sorted({conflict.later_transaction_id for conflict in found})
    err.write(
        f"logmart: UNDO refused: {len(found)} later committed change(s) of "
        f"{len(transactions)} transaction(s) touch rows or tables this UNDO sets back; "
        "running it would undo over their work (backout integrity):\n"
    )
    for conflict in found:
        err.write(f"  {conflict.describe()}\n")
    err.write(
        "logmart: include those transactions in the selection (they are backed out first), or "
        "add --force to write the script anyway (each affected statement gets a CONFLICT "
        "comment)\n"
    )
    return CONFLICTS_EXIT


def script_header(
    spark: Any, direction: str, selection: Selection, found: list[Conflict] | None
) -> tuple[list[str], dict[str, list[str]]]:
    """The header lines of the script and, per change, the later changes its statement
    undoes over (a forced UNDO)."""
    return header(spark, direction, selection, found), by_change(found or [])
