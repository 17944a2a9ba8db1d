"""UNDO and REDO SQL (marts.fct_change_sql, `logmart sql`) executed on a real SQL engine.

DuckDB holds the generators' tables (tests/marts/oracle.py); the REDO statements of every
committed change, run in commit order on empty tables, must leave exactly the generator's final
rows, and the UNDO statements, run in reverse order after them, must leave the tables empty.
Statements have typed constants where the source gives column types (Log Master: DLCI), string
constants otherwise (into VARCHAR columns here). solidDB tables whose DDL the log
changes (create, alter, rename, drop) are left out: replaying them needs the DDL too.
"""

from __future__ import annotations

import io
import json
import re

import pytest

from tests.marts.oracle import (
    create_tables,
    generator_capture,
    masked,
    replayable_tables,
    source_column_types,
    table_rows,
    truth_rows,
)
from tests.replay import replay, truth_tables
from udfs import cli
from udfs.change_sql import Selection, one_log, write_script
from udfs.errors import LogmartError

duckdb = pytest.importorskip("duckdb")

pytestmark = pytest.mark.spark


def statements(spark, source_system: str, capture: str, tables: list[str], direction: str):
    order = "asc" if direction == "redo" else "desc"
    names = ", ".join(f"'{name}'" for name in tables)
    return spark.sql(
        f"select change_id, {direction}_sql as statement, statement_warnings "
        "from marts.fct_change_sql "
        f"where source_system = '{source_system}' and capture = '{capture}' "
        f"and concat(table_schema, '.', table_name) in ({names}) "
        f"order by commit_position {order}, transaction_id {order}, change_seq {order}"
    ).collect()


@pytest.mark.parametrize("source_system", ["db2zos", "db2luw", "soliddb"])
def test_redo_in_commit_order_rebuilds_the_tables_and_undo_empties_them(spark, demo, source_system):
    truth_path = demo.raw / "truth" / source_system / "tables.json"
    if not truth_path.exists():
        pytest.skip(f"no {source_system} generator")
    truth = json.loads(truth_path.read_text())
    capture = generator_capture(demo.raw, source_system)
    tables = replayable_tables(demo.raw, source_system)
    assert tables
    con = duckdb.connect()
    types = create_tables(con, truth, tables, source_column_types(spark, source_system, capture))
    redo = statements(spark, source_system, capture, tables, "redo")
    assert redo, "no committed change"
    for change in redo:
        assert change.statement is not None, (change.change_id, change.statement_warnings)
        con.execute(change.statement)
    expected = truth_tables(demo.raw, source_system)
    for name in tables:
        # a value the log does not carry is left out by REDO: unknown on both sides
        got = masked(table_rows(con, name, types[name]), truth[name], types[name])
        want = masked(truth_rows(expected[name], types[name]), truth[name], types[name])
        assert got == want, name
    for change in statements(spark, source_system, capture, tables, "undo"):
        if change.statement is None:
            # a truncate (a partition-level DM) at which the log shows no row in what it
            # emptied has nothing to insert again: no UNDO, and its warning says so
            assert any(w.startswith("no row of the ") for w in change.statement_warnings), (
                change.change_id, change.statement_warnings)  # fmt: skip
            continue
        con.execute(change.statement)
    for name in tables:
        assert table_rows(con, name, types[name]) == truth_rows([], types[name]), name


def test_log_master_statements_have_typed_constants_and_find_rows_by_key(spark, demo):
    rows = spark.sql(
        "select operation, match_by, redo_sql, undo_sql from marts.fct_change_sql "
        "where source_system = 'db2zos'"
    ).collect()
    assert {r.match_by for r in rows if r.operation != "truncate"} == {"key"}
    text = "\n".join(r.redo_sql for r in rows)
    for constant in (r"DATE '\d{4}-", r"TIME '\d\d:", r"TIMESTAMP '\d{4}-", r"X'[0-9A-F]+'"):
        assert re.search(constant, text), constant
    assert "''" in text  # a quote inside a string constant is doubled
    deletes = [r.redo_sql for r in rows if r.operation == "delete"]
    delete = re.compile(r'DELETE FROM "[^"]+"\."[^"]+" WHERE .*;')
    assert deletes and all(delete.fullmatch(d) for d in deletes)


def test_undo_script_of_the_last_transaction_backs_out_only_that_transaction(spark, demo, capsys):
    source_system = "db2zos"
    truth = json.loads((demo.raw / "truth" / source_system / "tables.json").read_text())
    capture = generator_capture(demo.raw, source_system)
    # the demo's extract is its own log stream (the run's warehouse may hold others)
    in_stream = f"source_system = '{source_system}' and log_stream = '{capture}'"
    tables = sorted(truth)
    con = duckdb.connect()
    types = create_tables(con, truth, tables)
    for change in statements(spark, source_system, capture, tables, "redo"):
        con.execute(change.statement)
    last = spark.sql(
        "select transaction_id, commit_position from marts.fct_changes "
        f"where {in_stream} and disposition = 'committed' "
        "order by commit_position desc limit 1"
    ).first()
    before_last = spark.sql(
        "select max(commit_position) as p from marts.fct_changes "
        f"where {in_stream} and disposition = 'committed' "
        f"and commit_position < '{last.commit_position}'"
    ).first()
    code = cli.main(
        ["sql", "undo", "--transaction", last.transaction_id, "--source", source_system,
         "--stream", capture, "--warehouse", str(demo.warehouse)]
    )  # fmt: skip
    script = capsys.readouterr().out
    assert code == 0
    assert script.startswith("-- logmart UNDO script (Db2 for z/OS)")
    assert f"-- transaction {last.transaction_id}" in script
    con.execute(script)
    expected = replay(spark, source_system, before_last.p, log_stream=capture)
    for name in tables:
        assert table_rows(con, name, types[name]) == truth_rows(
            expected.get(name, []), types[name]
        ), name


def test_sql_command_errors_are_one_line(demo, capsys):
    code = cli.main(
        ["sql", "redo", "--transaction", "no-such-transaction", "--warehouse",
         str(demo.warehouse)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("logmart: no committed change in transaction")
    code = cli.main(["sql", "undo", "--since", "2000-01-01", "--warehouse", str(demo.warehouse)])
    err = capsys.readouterr().err
    assert code == 2 and "more than one log stream; choose one with --source" in err


def test_a_script_of_no_log_or_of_several_is_an_error_and_writes_nothing(spark, demo):
    """write_script counts the header from the rows it writes (one query): a selection in no
    log, or in several, raises as `one_log` does and leaves the output untouched."""
    logs = spark.sql(
        "select distinct source_system, log_stream from marts.fct_change_sql "
        "where generated_by is null order by source_system, log_stream"
    ).collect()
    assert len(logs) > 1
    for selection in (Selection(transaction="no-such-transaction"), Selection()):
        with pytest.raises(LogmartError) as expected:
            one_log(spark, selection)
        out = io.StringIO()
        with pytest.raises(LogmartError) as raised:
            write_script(spark, "undo", selection, out)
        assert str(raised.value) == str(expected.value)
        assert out.getvalue() == ""
    named = ", ".join(f"--source {row[0]} --stream {row[1]}" for row in logs)
    assert str(raised.value).endswith(f"choose one with {named}")


def test_a_script_header_counts_what_the_script_holds(spark, demo):
    """The header's counts, captures and notes are those of `one_log` over the same rows."""
    system, stream = spark.sql(
        "select source_system, log_stream from marts.fct_change_sql "
        "group by all order by count(*) desc limit 1"
    ).first()
    selection = Selection(source_system=system, log_stream=stream)
    log = one_log(spark, selection)
    out = io.StringIO()
    assert write_script(spark, "redo", selection, out) == log.changes
    lines = out.getvalue().splitlines()
    assert f"{log.changes} change(s) of {log.transactions} transaction(s)" in lines[0]
    assert f"({log.dialect})" in lines[0]
    assert lines[1].startswith(f"-- source {system}, log stream {stream} (capture(s) "
                               f"{', '.join(log.captures)}); ")  # fmt: skip
    notes = [line.removeprefix("-- note: ") for line in lines if line.startswith("-- note: ")]
    assert notes == log.warnings
    transactions = [line for line in lines if line.startswith("-- transaction ")]
    assert len(transactions) == log.transactions
    assert lines[-1].startswith("-- end: review")
