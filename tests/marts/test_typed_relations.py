"""The typed relations (issue 12 items 1, 2, 3, 5; docs/typed-tables.md) on the shared demo
build: `current.<name>` equals the generators' final tables value by value (DECIMAL scale,
DATE, TIMESTAMP fraction, binary), `changes.<name>` gives Delta-style change rows, added
columns are NULL before their ALTER, an uncastable value is NULL with a warning, HiveServer2
sums a DECIMAL column, `logmart changes --net` nets a window, and the views are incremental."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from decimal import Decimal

import pytest

from tests.faults.cases import CASE_STREAMS
from tests.marts.oracle import (
    duckdb_type_of_sql,
    generator_capture,
    normalise,
    replayable_tables,
    source_column_types,
)
from tests.replay import truth_tables
from tests.test_serve import beeline, free_port
from udfs import cli, serve
from udfs.change_sql import log_stream_of
from udfs.typed import (
    CHANGE_COLUMNS,
    SourceTable,
    _typed_view_sql,
    evolved_columns,
    relation_names,
    sync_views,
)

pytestmark = pytest.mark.spark

SOURCES = ("db2zos", "db2luw", "soliddb")
UNKNOWN = "<unavailable: not in the log>"  # compares as text in any column (normalise)


def relations(spark, *, damaged: bool = True) -> dict[tuple, str]:
    """Every typed relation's name by (source, stream, schema, table); with `damaged` False,
    not those of the fault matrix's damaged captures (each a log stream of its own in the run's
    warehouse: tests/faults/test_fault_matrix.py). The tests that query every relation query
    the demo's and the incremental scenario's: the matrix's would triple their time."""
    return {
        (r.source_system, r.log_stream, r.table_schema, r.table_name): r.relation_name
        for r in spark.sql("select * from marts.dim_typed_relations").collect()
        if damaged or r.log_stream not in CASE_STREAMS
    }


def comparable(value, duck_type: str):
    """A typed Spark value or a truth text as one comparable value."""
    value = normalise(value, duck_type)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        # TIMESTAMP WITH TIME ZONE: Spark gives the instant in the session's zone (UTC)
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def as_rows(rows: list[dict], types: dict[str, str]) -> Counter:
    return Counter(
        json.dumps({c: comparable(row.get(c), types[c]) for c in sorted(types)}, default=str)
        for row in rows
    )


def test_current_relations_are_the_generated_tables_typed(spark, demo):
    names = relations(spark)
    checked = []
    for source in SOURCES:
        if not (demo.raw / "truth" / source).exists():
            continue
        capture = generator_capture(demo.raw, source)
        stream = log_stream_of(capture)
        truth = truth_tables(demo.raw, source)
        unavailable = {
            name: table.get("unavailable") or []
            for name, table in json.loads(
                (demo.raw / "truth" / source / "tables.json").read_text()
            ).items()
        }
        sql_types = source_column_types(spark, source, capture)
        for name in replayable_tables(demo.raw, source):
            schema, table = name.split(".", 1)
            relation = f"current.{names[(source, stream, schema, table)]}"
            columns = {c for row in truth[name] for c in row} | set(sql_types.get(name, {}))
            types = {c: duckdb_type_of_sql(sql_types.get(name, {}).get(c) or "") for c in columns}
            # ROWID: the oracle keeps it as text, the relations as BINARY (hex in the images)
            binary = {
                f.name
                for f in spark.table(relation).schema.fields
                if f.dataType.typeName() == "binary"
            }
            types.update({c: "BLOB" for c in binary & columns})
            got = []
            for row in spark.table(relation).collect():
                values = row.asDict()
                values.update(dict.fromkeys(values["_unavailable"] or {}, UNKNOWN))
                got.append(values)
            expected = []
            for row, why in zip(
                truth[name], unavailable[name] or [None] * len(truth[name]), strict=True
            ):
                expected.append({**row, **dict.fromkeys(why or (), UNKNOWN)})
            assert as_rows(got, types) == as_rows(expected, types), relation
            checked.append(relation)
    assert len(checked) >= 6, checked
    # the catalog types the columns: a DECIMAL column is decimal(p,s), a binary column binary
    described = {
        r.data_type for relation in checked for r in spark.sql(f"describe {relation}").collect()
    }
    assert any(t.startswith("decimal(") for t in described)
    assert {"date", "timestamp", "binary"} <= described, described


def test_change_feeds_give_delta_change_rows(spark, demo):
    names = relations(spark, damaged=False)
    union = " union all ".join(
        f"select '{relation}' as relation, _change_type, count(*) as n "
        f"from changes.{relation} group by _change_type"
        for relation in sorted(names.values())
    )
    got = {(r.relation, r._change_type): r.n for r in spark.sql(union).collect()}
    expected_rows = spark.sql(
        "select source_system, log_stream, table_schema, table_name, t, count(*) as n from ("
        "select *, explode(if(operation = 'update' and before_image is not null and "
        "after_image is not null, array('update_preimage', 'update_postimage'), "
        "array(_change_type))) as t from marts.fct_changes where disposition = 'committed') "
        "group by source_system, log_stream, table_schema, table_name, t"
    ).collect()
    expected = {
        (names[(r.source_system, r.log_stream, r.table_schema, r.table_name)], r.t): r.n
        for r in expected_rows
        if r.log_stream not in CASE_STREAMS  # (a stream's table without a relation: KeyError)
    }
    assert got == expected
    kinds = {kind for _, kind in got}
    assert {"insert", "update_preimage", "update_postimage", "delete"} <= kinds
    # the naming rule of the dbt model is the one of udfs/typed.py
    assert names == {
        (t.source_system, t.log_stream, t.table_schema, t.table_name): n
        for t, n in relation_names(SourceTable(*key) for key in names).items()
    }
    # the build made every view and said so
    assert demo.summary["typed_relations"]["created"] + demo.summary["typed_relations"][
        "kept"
    ] == 3 * len(relations(spark))
    assert demo.summary["timings"]["typed_s"] >= 0


def test_as_of_functions_give_typed_rows_at_a_point(spark, demo):
    # as_of.<name>(last commit) is current.<name>, typed the same; at an earlier point it has
    # the rows of marts.table_as_of (the untyped function) there
    checked = 0
    # each stream's distinct commit positions in order (nulls first, as `order by` puts them),
    # in one query
    stream_positions = {
        (r.source_system, r.log_stream): [None] * r.has_null + list(r.positions)
        for r in spark.sql(
            "select source_system, log_stream, "
            "sort_array(collect_set(commit_position)) as positions, "
            "cast(count_if(commit_position is null) > 0 as int) as has_null "
            "from marts.fct_changes group by source_system, log_stream"
        ).collect()
    }
    for (source, stream, schema, table), name in sorted(
        relations(spark, damaged=False).items(), key=str
    ):
        positions = stream_positions.get((source, stream), [])
        current = spark.table(f"current.{name}")
        if not positions:
            # a stream with no change (the demo's captures whose every record is quarantined,
            # e.g. db2luw wrong_byteorder): no row now, none at any point
            assert current.count() == 0, name
            at_start = spark.sql(f"select * from as_of.{name}('0')")
            assert at_start.schema == current.schema and at_start.count() == 0, name
            continue
        at_last = spark.sql(f"select * from as_of.{name}('{positions[-1]}')")
        assert at_last.schema == current.schema, name
        comparable_columns = [c for c in current.columns if c != "_unavailable"]  # a map
        now, last = current.select(comparable_columns), at_last.select(comparable_columns)
        # the same rows, each as often: neither side has a row the other lacks (one query)
        assert now.exceptAll(last).unionAll(last.exceptAll(now)).isEmpty(), name
        middle = positions[len(positions) // 2]
        schema_literal = "null" if schema is None else f"'{schema}'"
        # the typed and the untyped function's rows at the middle point, counted in one query
        typed, untyped = spark.sql(
            f"select (select count(*) from as_of.{name}('{middle}')), "
            f"(select count(*) from marts.table_as_of({schema_literal}, '{table}', '{middle}') "
            f"where source_system = '{source}' and log_stream = '{stream}')"
        ).first()
        assert typed == untyped, name
        checked += untyped > 0
    assert checked >= 3


def test_a_column_added_by_alter_is_null_before_it_existed(spark, demo):
    versions = spark.sql(
        "select source_system, split(capture, '/')[0] as log_stream, table_schema, table_name, "
        "valid_from_position, transform(columns, c -> c.column_name) as names "
        "from marts.dim_table_versions order by capture, version_number"
    ).collect()
    seen: dict[tuple, set[str]] = {}
    added = []
    for v in versions:
        key = (v.source_system, v.log_stream, v.table_schema, v.table_name)
        if key in seen and v.valid_from_position is not None:
            added += [
                (key, name, v.valid_from_position) for name in v.names if name not in seen[key]
            ]
        seen.setdefault(key, set()).update(v.names or [])
    assert added, "no generator adds a column with ALTER"
    names = relations(spark)
    checked = 0
    for key, column_name, position in added:
        relation = names[key]
        assert column_name in spark.table(f"changes.{relation}").columns
        column = "`" + column_name.replace("`", "``") + "`"
        # a version is in force from a log position (dim_table_versions): the changes logged
        # before it (fct_changes.log_position) do not have the column
        source_system, log_stream = key[0], key[1]
        before = spark.sql(
            f"select count(*) as n, count(v.{column}) as with_value "
            f"from changes.{relation} v join marts.fct_changes c "
            f"on c.source_system = '{source_system}' and c.log_stream = '{log_stream}' "
            "and c.transaction_id = v._transaction_id and c.change_seq = v._change_seq "
            f"where c.log_position < '{position}' and v._change_type != 'truncate'"
        ).first()
        assert before.with_value == 0, (relation, column_name)
        checked += before.n
    assert checked > 0, "no change was logged before a column was added"


def test_an_uncastable_value_is_null_with_a_warning(spark):
    columns = evolved_columns(
        [[("ID", "INTEGER"), ("AMT", "DECIMAL(5,2)"), ("D", "DATE"), ("B", "BLOB"),
          ("TS", "TIMESTAMP(9)"), ("N", "VARCHAR(9)")]]
    )  # fmt: skip
    meta = ", ".join(f"'m' as {c}" for c in CHANGE_COLUMNS)
    rows = (
        f"select {meta}, map('ID', 'x1', 'AMT', '123456.00', 'D', '2024-02-30', 'B', 'ZZ', "
        "'TS', '2024-01-02 03:04:05.123456789', 'N', 'text') as _i union all "
        f"select {meta}, map('ID', '7', 'AMT', '-0.01', 'D', '2024-02-29', 'B', 'C1F0', "
        "'TS', '2024-01-02 03:04:05.123456000', 'N', null) as _i"
    )
    got = spark.sql(_typed_view_sql(columns, CHANGE_COLUMNS, rows)).collect()
    bad, good = sorted(got, key=lambda r: r.ID is not None)
    assert (bad.ID, bad.AMT, bad.D, bad.B, bad.N) == (None, None, None, None, "text")
    assert bad.TS == dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
    assert sorted(w.split(":")[0] for w in bad._warnings) == ["AMT", "B", "D", "ID", "TS"]
    assert "ID: x1 cannot be read as INT" in bad._warnings
    assert "TS: fraction beyond microseconds cut" in bad._warnings
    assert (good.ID, good.AMT, good.D, bytes(good.B)) == (
        7,
        Decimal("-0.01"),
        dt.date(2024, 2, 29),
        b"\xc1\xf0",
    )
    assert good._warnings == []


def test_hiveserver2_sums_a_decimal_column_of_a_change_feed(spark, demo):
    names = relations(spark)
    found = None
    for relation in sorted(names.values()):
        for field in spark.table(f"changes.{relation}").schema.fields:
            if field.dataType.typeName() == "decimal":
                query = (
                    f"select sum(`{field.name}`) as total from changes.{relation} "
                    "where _change_type in ('insert', 'update_postimage')"
                )
                expected = spark.sql(query).first().total
                if expected is not None:
                    found = query
                    break
        if found:
            break
    assert found, "no DECIMAL column with values in any typed change feed"
    server = serve.start(spark, "127.0.0.1", free_port())
    try:
        rows = beeline(server.url, found)
    finally:
        server.stop()
    assert rows[0] == ["total"]
    assert Decimal(rows[1][0]) == expected


def net_reference(rows: list[dict]) -> Counter:
    """Iceberg net_changes over change feed rows in commit order, by _row_key."""
    by_key: dict[str, list[dict]] = {}
    for row in rows:
        if row["_change_type"] != "truncate":
            by_key.setdefault(row["_row_key"], []).append(row)
    net = []
    for changes in by_key.values():
        first, last = changes[0], changes[-1]
        before = first["_change_type"] in ("update_preimage", "delete")
        after = last["_change_type"] in ("insert", "update_postimage")
        if before and after:
            net += [{**first, "_change_type": "update_preimage"},
                    {**last, "_change_type": "update_postimage"}]  # fmt: skip
        elif before:
            net.append({**first, "_change_type": "delete"})
        elif after:
            net.append({**last, "_change_type": "insert"})
    net += [row for row in rows if row["_change_type"] == "truncate"]
    return Counter(json.dumps(row, sort_keys=True) for row in net)


def run_changes(demo, capsys, table, source, stream, first, last, net):
    # --stream too: other tests of the shared demo add streams holding the same table names
    args = ["changes", "--table", table, "--source", source, "--stream", stream,
            "--from-position", first,
            "--to-position", last, "--format", "json",
            "--warehouse", str(demo.warehouse)]  # fmt: skip
    code = cli.main([*args, "--net"] if net else args)
    out, err = capsys.readouterr()
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_logmart_changes_nets_a_window(spark, demo, capsys):
    # a keyed table whose changes hold a row inserted and deleted and a row updated twice
    candidates = spark.sql(
        "select d.source_system, d.log_stream, d.table_schema, d.table_name, d.relation_name "
        "from marts.dim_typed_relations d where size(d.key_columns) > 0 "
        "order by d.source_system, d.relation_name"
    ).collect()
    chosen = None
    for c in candidates:
        shape = spark.sql(
            f"select _row_key, collect_list(_change_type) as kinds from changes.{c.relation_name} "
            "group by _row_key"
        ).collect()
        inserted_deleted = any("insert" in r.kinds and "delete" in r.kinds for r in shape)
        updated_twice = any(r.kinds.count("update_postimage") >= 2 for r in shape)
        if inserted_deleted and updated_twice:
            chosen = c
            break
    assert chosen, "no table has a row inserted and deleted and a row updated twice"
    bounds = spark.sql(
        f"select min(_commit_position) as first, max(_commit_position) as last "
        f"from changes.{chosen.relation_name}"
    ).first()
    table = f"{chosen.table_schema}.{chosen.table_name}"
    logs = (chosen.source_system, chosen.log_stream)
    feed = run_changes(demo, capsys, table, *logs, bounds.first, bounds.last, False)
    net = run_changes(demo, capsys, table, *logs, bounds.first, bounds.last, True)
    assert len(feed) == spark.table(f"changes.{chosen.relation_name}").count()
    assert Counter(json.dumps(row, sort_keys=True) for row in net) == net_reference(feed)
    assert len(net) < len(feed)
    keys = Counter(row["_row_key"] for row in net if row["_change_type"] != "truncate")
    assert max(keys.values()) <= 2
    # bad input: one `logmart:` line, exit 2
    code = cli.main(["changes", "--table", "NO.SUCH_TABLE", "--from-position", "1",
                     "--to-position", "2", "--warehouse", str(demo.warehouse)])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("logmart: no table NO.SUCH_TABLE") and err.count("\n") == 1
    code = cli.main(["changes", "--table", table, "--source", chosen.source_system,
                     "--stream", chosen.log_stream, "--from-position", bounds.last,
                     "--to-position", bounds.first,
                     "--warehouse", str(demo.warehouse)])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 2 and "is after --to-position" in err and err.count("\n") == 1


def test_views_are_incremental_and_follow_their_tables(spark, demo):
    again = sync_views(spark)
    assert again.created == [] and again.dropped == []
    assert len(again.kept) == 3 * len(relations(spark))
    # a table in no capture any more (its views left by an earlier build) loses its views
    for schema in ("changes", "current"):
        spark.sql(f"create or replace view {schema}.db2zos__gone__x__y as select 1 as a")
    spark.sql(
        "create or replace function as_of.db2zos__gone__x__y(position_or_ts string) "
        "returns table return select 1 as a"
    )
    after = sync_views(spark)
    assert sorted(after.dropped) == [
        "as_of.db2zos__gone__x__y",
        "changes.db2zos__gone__x__y",
        "current.db2zos__gone__x__y",
    ]
    assert after.created == []
    assert "db2zos__gone__x__y" not in {
        r.viewName for r in spark.sql("show views in changes").collect()
    }


def test_a_changed_definition_is_made_again_and_the_rest_kept(spark, demo, monkeypatch):
    """A sync whose relations and SQL are those of the last one looks at no object one by one
    (the layer's fingerprint, a property of schema `changes`); when one view's SQL changes,
    that view alone is made again."""
    from udfs import typed

    key, name = min(relations(spark).items(), key=lambda item: item[1])
    original = typed.current_view_sql

    def changed(table, columns):
        sql = original(table, columns)
        ours = (table.source_system, table.log_stream, table.table_schema, table.table_name)
        return f"{sql} where 1 = 1" if ours == key else sql

    monkeypatch.setattr(typed, "current_view_sql", changed)
    first = sync_views(spark)
    assert first.created == [f"current.{name}"]
    assert len(first.kept) == 3 * len(relations(spark)) - 1
    text = spark.sql(f"show create table current.{name}").first()[0]
    assert text.rstrip().endswith("where 1 = 1")
    monkeypatch.setattr(typed, "current_view_sql", original)
    back = sync_views(spark)
    assert back.created == [f"current.{name}"]
    # unchanged: the layer's fingerprint answers, with what a look at each object would say
    again = sync_views(spark)
    assert again.created == [] and again.dropped == []
    assert sorted(again.kept) == sorted(back.kept + back.created)
    assert again.too_wide == sorted(back.too_wide)
