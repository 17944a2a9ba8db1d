"""Backout integrity (udfs.backout, `logmart sql undo`): later committed work on the rows an
UNDO sets back is found, named, and refused unless --force.

The conflict query runs on Spark over hand-made changes (a temporary view shaped as
marts.fct_changes), so each case says exactly which later change must be named; the
selection checks and the conflict list need no Spark.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from types import SimpleNamespace

import pytest

from logmart_generators.logmaster import EXTRACT
from udfs import cli
from udfs.backout import Conflict, _left_out, check_selection, conflicts, refuse_conflicts
from udfs.change_sql import Selection, _statements
from udfs.errors import LogmartError

VIEW = "backout_fixture_changes"
COLUMNS = (
    "change_id, source_system, log_stream, table_schema, table_name, transaction_id, "
    "disposition, commit_position, change_seq, commit_ts, operation, change_kind, "
    "key_columns, before_image, after_image"
)


def change(change_id, txn, position, operation, table="T", before=None, after=None, **more):
    """One fct_changes row as SQL (a map literal from a dict, null for None)."""

    def image(values):
        if values is None:
            return "cast(null as map<string,string>)"
        pairs = ", ".join(
            f"'{k}', {'null' if v is None else repr(str(v))}" for k, v in values.items()
        )
        return f"map({pairs})"

    keys = more.get("keys", ["K"])
    kind = more.get("kind", operation)
    return (
        f"select '{change_id}', 'db2zos', 'PROD', 'S', '{table}', '{txn}', "
        f"'{more.get('disposition', 'committed')}', '{position}', {more.get('seq', 1)}, "
        "cast(null as timestamp), "
        f"'{operation}', '{kind}', "
        f"array({', '.join(repr(k) for k in keys)}), {image(before)}, {image(after)}"
    )


@pytest.fixture(scope="module")
def changes(spark):
    rows = [
        # A then B update the same keyed row; C updates another row of the table
        change("A", "tx1", "P01", "update", before={"K": 1, "V": "a"}, after={"K": 1, "V": "b"}),
        change("B", "tx2", "P02", "update", before={"K": 1, "V": "b"}, after={"K": 1, "V": "c"}),
        change(
            "C", "tx2", "P02", "update", before={"K": 9, "V": "x"}, after={"K": 9, "V": "y"}, seq=2
        ),
        # D deletes key 2, E inserts key 2 again
        change("D", "tx3", "P03", "delete", before={"K": 2, "V": "d"}),
        change("E", "tx4", "P04", "insert", after={"K": 2, "V": "e"}),
        # F updates a row of U, G empties U (a mass delete), R (rolled back) updates F's row
        change("F", "tx5", "P05", "update", "U", {"K": 1, "V": "a"}, {"K": 1, "V": "b"}),
        change(
            "R",
            "tx6",
            None,
            "update",
            "U",
            {"K": 1, "V": "b"},
            {"K": 1, "V": "z"},
            disposition="rolled_back",
        ),
        change("G", "tx7", "P07", "truncate", "U", kind="mass_delete"),
        # a table without a key: rows are the whole image
        change("H", "tx8", "P08", "insert", "N", after={"A": "x", "B": None}, keys=[]),
        change("I", "tx9", "P09", "delete", "N", before={"A": "x", "B": None}, keys=[]),
        change("J", "tx9", "P09", "insert", "N", after={"A": "y", "B": None}, keys=[], seq=2),
        # a truncate backed out: any later change of its table is later work
        change("X", "tx10", "P10", "truncate", "W", kind="truncate"),
        change("Y", "tx11", "P11", "insert", "W", after={"K": 5}),
    ]
    rows = [row.replace("'None'", "null") for row in rows]
    spark.sql(f"create or replace temporary view {VIEW} ({COLUMNS}) as " + " union all ".join(rows))
    yield VIEW
    spark.catalog.dropTempView(VIEW)


def found(spark, view, **selection):
    # include_generated: the view has no generated_by (leaving those out reads marts.fct_changes)
    chosen = Selection(
        source_system="db2zos", log_stream="PROD", include_generated=True, **selection
    )
    return {(c.change_id, c.later_change_id): c for c in conflicts(spark, chosen, view)}


def test_a_later_update_of_the_same_row_is_a_conflict(spark, changes):
    result = found(spark, changes, transaction="tx1")
    assert set(result) == {("A", "B")}  # C changed another row: no conflict
    conflict = result[("A", "B")]
    assert conflict.later_transaction_id == "tx2"
    assert conflict.later_commit_position == "P02"
    assert conflict.reason == 'changes the same row, key {"K":"1"}'
    assert "later update B of S.T, transaction tx2 committed at position P02" in conflict.later()


def test_backing_out_both_updates_together_has_no_conflict(spark, changes):
    assert found(spark, changes, from_position="P01", to_position="P02") == {}


def test_undo_of_a_delete_whose_key_was_inserted_again_is_a_conflict(spark, changes):
    result = found(spark, changes, transaction="tx3")
    assert set(result) == {("D", "E")}
    assert result[("D", "E")].later_operation == "insert"


def test_a_later_mass_delete_of_the_table_is_a_conflict_and_rolled_back_work_is_not(spark, changes):
    result = found(spark, changes, transaction="tx5")
    assert set(result) == {("F", "G")}  # R rolled back: no later work
    assert result[("F", "G")].reason == "empties the table (mass_delete)"


def test_rows_of_a_table_without_a_key_are_matched_by_their_whole_image(spark, changes):
    result = found(spark, changes, transaction="tx8")
    assert set(result) == {("H", "I")}  # J inserted another row
    assert result[("H", "I")].reason == 'changes the same row, row {"A":"x","B":null}'


def test_later_changes_of_a_table_whose_truncate_is_backed_out_are_conflicts(spark, changes):
    result = found(spark, changes, transaction="tx10")
    assert set(result) == {("X", "Y")}
    assert result[("X", "Y")].reason == "changes the table after the truncate backed out"


def test_filters_narrow_what_is_backed_out(spark, changes):
    # the window P01..P09 without tx2: A's row is changed by tx2, which is not backed out
    result = found(
        spark, changes, from_position="P01", to_position="P09", exclude_transactions=("tx2",)
    )
    assert ("A", "B") in result
    assert not {pair for pair in result if pair[0] in ("D", "H")}  # E, I are in the window
    assert set(found(spark, changes, from_position="P01", tables=("S.N",))) == set()
    # the deletes D and I: key 2 is inserted again by E; J inserted another row than I's
    assert set(found(spark, changes, from_position="P01", operations=("delete",))) == {("D", "E")}


# ---------------------------------------------------------------------------------------------
# Without Spark


CONFLICT = Conflict(
    "A", "update", "S.T", "tx1", "B", "update", "tx2", "P02", dt.datetime(2024, 1, 1, 0, 0, 2),
    'changes the same row, key {"K":"1"}',
)  # fmt: skip


def test_a_refused_undo_lists_each_later_change_and_exits_3():
    err = io.StringIO()
    assert refuse_conflicts([CONFLICT], err) == 3
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("logmart: UNDO refused: 1 later committed change(s) of 1 ")
    assert lines[1] == (
        "  update A (transaction tx1) <- later update B of S.T, transaction tx2 committed at "
        'position P02 at 2024-01-01 00:00:02: changes the same row, key {"K":"1"}'
    )
    assert "--force" in lines[2]


def test_a_forced_undo_names_the_later_change_above_the_statement():
    rows = iter([SimpleNamespace(
        change_id="A", transaction_id="tx1", commit_position="P01", commit_ts=None,
        operation="update", statement='UPDATE "S"."T" SET "V" = \'a\' WHERE "K" = 1;',
        statement_warnings=[],
    )])  # fmt: skip
    lines = list(_statements(rows, "undo", {"A": [CONFLICT.later()]}))
    assert lines[1] == f"-- CONFLICT (--force): {CONFLICT.later()}"
    assert lines[2].startswith('UPDATE "S"."T"')


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (Selection(), "choose the changes: --transaction ID, or a window"),
        (Selection(transaction="t", since=dt.datetime(2024, 1, 1)), "--transaction names one"),
        (
            Selection(since=dt.datetime(2024, 1, 2), until=dt.datetime(2024, 1, 1)),
            "--until 2024-01-01 00:00:00 is before --since 2024-01-02 00:00:00",
        ),
        (Selection(from_position="P2", to_position="P1"), "--to-position P1 is before"),
        (
            Selection(from_position="P1", tables=("CUSTOMER",)),
            "--table 'CUSTOMER': give the table as SCHEMA.TABLE",
        ),
    ],
)
def test_a_selection_that_cannot_mean_anything_is_refused(selection, message):
    with pytest.raises(LogmartError, match="^" + re.escape(message)):
        check_selection(selection)


def test_bad_sql_selections_are_one_line_and_exit_2_before_spark(capsys, tmp_path):
    code = cli.main(
        ["sql", "undo", "--since", "2024-01-02", "--until", "2024-01-01",
         "--warehouse", str(tmp_path / "none")]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith("logmart: --until 2024-01-01 00:00:00 is before --since")
    assert captured.err.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# `logmart sql` over the demo build (Log Master's generated log), scripts run on DuckDB

SOURCE = "db2zos"
# the demo's extract, its own log stream (the run's warehouse may hold others of the source)
STREAM = EXTRACT
IN_STREAM = f"source_system = '{SOURCE}' and log_stream = '{STREAM}'"


def committed_changes(spark) -> list:
    return spark.sql(
        "select change_id, transaction_id, commit_position, change_seq, operation, authid, "
        "table_schema, table_name, key_columns, before_image, after_image "
        f"from marts.fct_changes where {IN_STREAM} and disposition = 'committed' "
        "order by commit_position, transaction_id, change_seq"
    ).collect()


def rows_of(change) -> set:
    """The rows a change touches, as (table, key values): every row of its table for a
    truncate."""
    table = f"{change.table_schema}.{change.table_name}"
    if change.operation == "truncate":
        return {(table, "*")}
    keys = list(change.key_columns or [])
    return {
        (table, tuple(image[k] for k in keys))
        for image in (change.before_image, change.after_image)
        if image is not None
    }


def touches(earlier, later) -> bool:
    mine, theirs = rows_of(earlier), rows_of(later)
    tables = {table for table, key in theirs if key == "*"}
    return bool(mine & theirs) or any(table in tables for table, _ in mine)


def run(capsys, *args: str, warehouse) -> tuple[int, str, str]:
    code = cli.main(
        ["sql", *args, "--source", SOURCE, "--stream", STREAM, "--warehouse", str(warehouse)]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_undo_over_later_work_is_refused_and_forced_names_it(spark, demo, capsys):
    changes = committed_changes(spark)
    pair = next(
        (
            (a, b)
            for i, a in enumerate(changes)
            for b in changes[i + 1 :]
            if b.transaction_id != a.transaction_id and a.operation != "truncate" and touches(a, b)
        ),
        None,
    )
    assert pair, "the demo log has no row changed by two transactions"
    a, b = pair
    code, out, err = run(
        capsys, "undo", "--transaction", a.transaction_id, warehouse=demo.warehouse
    )
    assert code == 3 and out == ""
    assert err.startswith("logmart: UNDO refused: ")
    assert f"later {b.operation} {b.change_id} of {b.table_schema}.{b.table_name}" in err
    assert f"transaction {b.transaction_id} committed at position {b.commit_position}" in err
    code, script, _ = run(
        capsys, "undo", "--transaction", a.transaction_id, "--force", warehouse=demo.warehouse
    )
    assert code == 0
    assert "\n-- backout integrity: CONFLICTS, " in script
    assert f"-- CONFLICT (--force): later {b.operation} {b.change_id} of " in script
    # with the later transaction in the selection too, B is backed out first: no conflict
    # with it (a window from A's to B's commit covers both)
    code, script, err = run(
        capsys, "undo", "--from-position", a.commit_position, "--to-position",
        b.commit_position, "--force", warehouse=demo.warehouse,
    )  # fmt: skip
    assert code == 0, err
    assert f"later {b.operation} {b.change_id} of" not in script


def test_a_script_header_says_what_it_covers(spark, demo, capsys):
    last = committed_changes(spark)[-1]
    code, script, _ = run(capsys, "undo", "--transaction", last.transaction_id,
                          warehouse=demo.warehouse)  # fmt: skip
    assert code == 0
    header = [line for line in script.splitlines()[:12] if line.startswith("-- ")]
    assert header[0].startswith("-- logmart UNDO script (Db2 for z/OS): backs out ")
    assert f"-- window: transaction {last.transaction_id}" in header
    assert "-- filters: none" in header
    assert any(line.startswith("-- left out: ") for line in header)
    assert any(
        line.startswith("-- backout integrity: checked; no later committed change")
        for line in header
    )
    table = f"{last.table_schema}.{last.table_name}"
    code, script, _ = run(capsys, "redo", "--transaction", last.transaction_id, "--table", table,
                          "--operation", last.operation, warehouse=demo.warehouse)  # fmt: skip
    assert code == 0
    assert f"-- filters: --table {table} --operation {last.operation}" in script
    assert "-- backout integrity: not checked (REDO" in script
    # a filter on who made the changes (a subquery on fct_changes) and the window around it
    authid = next(c.authid for c in reversed(committed_changes(spark)) if c.authid)
    code, script, err = run(capsys, "redo", "--from-position", "0", "--authid", authid,
                            warehouse=demo.warehouse)  # fmt: skip
    assert code == 0, err
    assert f"-- filters: --authid {authid}" in script
    others = (
        spark.sql(
            f"select count(*) as n from marts.fct_changes where {IN_STREAM} "
            f"and disposition = 'committed' and not authid <=> '{authid}'"
        )
        .first()
        .n
    )
    assert others, f"every committed change of the demo log was made by {authid}"
    assert f"-- left out: {others} other change(s) in the window that the filters" in script


def test_bad_selections_are_one_line_exit_2_and_nothing_written(demo, capsys):
    for args, message in [
        (["undo", "--from-position", "0", "--table", "S.NO_SUCH_TABLE"],
         "logmart: --table S.NO_SUCH_TABLE: no committed change of that table in source db2zos"),
        (["redo", "--from-position", "ZZZZ"],
         "logmart: no committed change in transactions committed from position ZZZZ"),
        (["undo", "--from-position", "0", "--authid", "NO_SUCH_USER"],
         "logmart: no committed change in transactions committed from position 0 with --authid"),
    ]:  # fmt: skip
        code, out, err = run(capsys, *args, warehouse=demo.warehouse)
        assert (code, out) == (2, ""), (args, err)
        assert err.startswith(message) and err.count("\n") == 1, (args, err)


def test_redo_after_a_point_in_time_recovery_without_the_bad_transaction(spark, demo, capsys):
    """Log Master's REDO after a point-in-time recovery: the tables restored to a point, the
    work committed after it applied again but for one bad transaction (one whose rows no later
    transaction touches, so the rest applies without it)."""
    duckdb = pytest.importorskip("duckdb")
    from tests.marts.oracle import create_tables, table_rows, truth_rows
    from tests.replay import replay

    truth = json.loads((demo.raw / "truth" / SOURCE / "tables.json").read_text())
    tables = sorted(truth)
    changes = committed_changes(spark)
    positions = sorted({c.commit_position for c in changes})
    point = positions[len(positions) // 3]
    after = [c for c in changes if c.commit_position > point]
    bad = next(
        a.transaction_id
        for i, a in enumerate(after)
        if a.operation != "truncate"
        and not any(
            touches(mine, b)
            for mine in after
            if mine.transaction_id == a.transaction_id
            for b in after[i + 1 :]
            if b.transaction_id != a.transaction_id
        )
    )
    con = duckdb.connect()
    types = create_tables(con, truth, tables)
    for row in spark.sql(  # the point-in-time recovery: the tables as of `point`
        "select redo_sql from marts.fct_change_sql "
        f"where {IN_STREAM} and commit_position <= '{point}' "
        "order by commit_position, transaction_id, change_seq"
    ).collect():
        con.execute(row.redo_sql)
    start = min(p for p in positions if p > point)
    code, script, err = run(capsys, "redo", "--from-position", start, "--exclude-transaction",
                            bad, warehouse=demo.warehouse)  # fmt: skip
    assert code == 0, err
    assert f"-- left out: transaction {bad}, " in script
    assert f"-- transaction {bad}," not in script
    con.execute(script)
    expected = replay(spark, SOURCE, exclude=(bad,), log_stream=STREAM)
    assert expected != replay(spark, SOURCE, log_stream=STREAM)  # the bad one changed something
    for name in tables:
        assert table_rows(con, name, types[name]) == truth_rows(
            expected.get(name, []), types[name]
        ), name


def test_changes_db2_made_itself_are_left_out_unless_asked_for():
    generated = "not (generated_by is not null)"
    default = Selection(transaction="t")
    assert generated in default.where() and default.filters() == []
    kept = Selection(transaction="t", include_generated=True)
    assert generated not in kept.where() and kept.filters() == ["--include-generated"]
    # what the filters leave out is counted against the window with every change in it
    assert generated not in default.window_where()


LEFT_OUT_VIEW = "backout_fixture_left_out"


@pytest.fixture
def window_changes(spark):
    """A window of seven committed changes in one log, each with what a script's header must
    say of it: tx1's insert is selected; its delete is not (--operation insert); tx2 is left
    out with its two changes, one of them made by an RI constraint (counted with tx2, not as
    well among the changes Db2 made itself); tx3's cascade is left out as made by Db2; tx4's
    insert has no UNDO statement."""
    rows = [
        # change_id, transaction, position, operation, generated_by, undo_sql
        ("C1", "tx1", "P01", "insert", None, "delete ..."),
        ("C2", "tx1", "P01", "delete", None, "insert ..."),
        ("C3", "tx2", "P02", "insert", None, "delete ..."),
        ("C4", "tx2", "P02", "insert", "ri_constraint", "delete ..."),
        ("C5", "tx3", "P03", "insert", None, "delete ..."),
        ("C6", "tx3", "P03", "insert", "ri_constraint", "delete ..."),
        ("C7", "tx4", "P04", "insert", None, None),
    ]
    selects = [
        f"select '{cid}', 'db2zos', 'PROD', 'S', 'T', '{txn}', '{position}', "
        f"cast(null as timestamp), '{operation}', "
        f"{'null' if generated is None else repr(generated)}, "
        f"{'cast(null as string)' if undo is None else repr(undo)}, 'redo ...'"
        for cid, txn, position, operation, generated, undo in rows
    ]
    spark.sql(
        f"create or replace temporary view {LEFT_OUT_VIEW} (change_id, source_system, "
        "log_stream, table_schema, table_name, transaction_id, commit_position, commit_ts, "
        "operation, generated_by, undo_sql, redo_sql) as " + " union all ".join(selects)
    )
    yield LEFT_OUT_VIEW
    spark.catalog.dropTempView(LEFT_OUT_VIEW)


def test_each_change_left_out_is_counted_once_under_one_reason(spark, window_changes):
    selection = Selection(
        from_position="P00", source_system="db2zos", log_stream="PROD",
        operations=("insert",), exclude_transactions=("tx2", "tx99"),
    )  # fmt: skip
    assert _left_out(spark, "undo", selection, window_changes) == [
        "left out: transaction tx2, 2 change(s) (--exclude-transaction)",
        "left out: transaction tx99 (--exclude-transaction): not in the window",
        "left out: 1 change(s) Db2 made itself (fct_changes.generated_by: RI constraints, "
        "triggers, temporal history): the target's own constraints and triggers make them "
        "again (--include-generated keeps them)",
        "left out: 1 other change(s) in the window that the filters do not select",
        "left out: 1 change(s) with no UNDO statement, each a comment below saying why",
    ]
    # with the changes Db2 made kept, tx3's cascade is selected and tx2 still counts both
    kept = Selection(
        from_position="P00", source_system="db2zos", log_stream="PROD",
        operations=("insert",), exclude_transactions=("tx2",), include_generated=True,
    )  # fmt: skip
    assert _left_out(spark, "undo", kept, window_changes) == [
        "left out: transaction tx2, 2 change(s) (--exclude-transaction)",
        "left out: 1 other change(s) in the window that the filters do not select",
        "left out: 1 change(s) with no UNDO statement, each a comment below saying why",
    ]
    everything = Selection(
        from_position="P00", source_system="db2zos", log_stream="PROD", include_generated=True
    )
    assert _left_out(spark, "redo", everything, window_changes) == ["left out: nothing"]


def test_a_script_over_a_transaction_with_compensation_records_says_so(spark, demo, capsys):
    """Log Master's UORHASCOMP reaches fct_transactions, and the script's header says that
    the work Db2 undid in the transaction is not in it."""
    found = spark.sql(
        "select transaction_id, incomplete_transaction from marts.fct_transactions "
        f"where {IN_STREAM} and disposition = 'committed' and has_compensation "
        "and change_count > savepoint_rollback_count + reversed_count "
        "order by commit_position limit 1"
    ).first()
    assert found, "the demo log has no committed unit of recovery with compensation records"
    assert found.incomplete_transaction is False  # the generator completes every record
    code, script, err = run(capsys, "redo", "--transaction", found.transaction_id,
                            warehouse=demo.warehouse)  # fmt: skip
    assert code == 0, err
    assert (
        f"-- note: transaction(s) {found.transaction_id} hold compensation records (UORHASCOMP)"
        in script
    )
    assert "INCOMPLETETRANS" not in script


def test_the_bi_view_pairs_the_changes_as_the_undo_check_does(spark, demo):
    """marts.rpt_backout_conflicts (a view for BI) gives, for one transaction, the pairs and
    reasons `logmart sql undo --transaction T` finds: in every source, for transactions with
    later work on their rows and without."""
    from udfs.backout import latest_transactions_sql

    latest = spark.sql(latest_transactions_sql()).collect()
    picked = []
    for source in ("db2zos", "db2luw", "soliddb"):  # two refused and one not, per source
        mine = [r for r in latest if r.source_system == source]
        picked += [r for r in mine if r.later_transactions][:2]
        picked += [r for r in mine if not r.later_transactions][:1]
    assert {r.source_system for r in picked} == {"db2zos", "db2luw", "soliddb"}
    assert any(r.later_transactions for r in picked)
    # the view's rows of every picked transaction, in one query
    keys = ", ".join(
        f"('{r.source_system}', '{r.log_stream}', '{r.transaction_id}')" for r in picked
    )
    in_view: dict[tuple, set] = {}
    for v in spark.sql(
        "select v.* from marts.rpt_backout_conflicts v left semi join "
        f"(values {keys}) as picked (source_system, log_stream, transaction_id) "
        "using (source_system, log_stream, transaction_id) "
        "where v.later_transaction_id <> v.transaction_id"
    ).collect():
        key = (v.source_system, v.log_stream, v.transaction_id)
        in_view.setdefault(key, set()).add((v.change_id, v.later_change_id, v.reason))
    for r in picked:
        selection = Selection(
            transaction=r.transaction_id, source_system=r.source_system, log_stream=r.log_stream
        )
        want = {(c.change_id, c.later_change_id, c.reason) for c in conflicts(spark, selection)}
        got = in_view.get((r.source_system, r.log_stream, r.transaction_id), set())
        assert got == want, r.transaction_id
        assert bool(got) == bool(r.later_transactions)
