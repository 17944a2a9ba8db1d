"""The rules of the typed relations (udfs/typed.py), without Spark: source type -> Spark type,
text -> typed value SQL, relation names (with a clash), columns over layout versions, the SQL
of the views and of net changes."""

from __future__ import annotations

import hashlib

import pytest

from udfs.typed import (
    SourceTable,
    base_name,
    changes_view_sql,
    current_view_sql,
    evolved_columns,
    net_changes_sql,
    relation_names,
    spark_type,
    typed_columns,
    typed_value_sql,
    warnings_sql,
)


@pytest.mark.parametrize(
    ("source_type", "expected"),
    [
        ("SMALLINT", "SMALLINT"),
        ("TINYINT", "SMALLINT"),
        ("INTEGER", "INT"),
        ("INT", "INT"),
        ("BIGINT", "BIGINT"),
        ("DECIMAL(5,2)", "DECIMAL(5,2)"),
        ("DECIMAL( 31 , 0 )", "DECIMAL(31,0)"),
        ("NUMERIC(38,10)", "DECIMAL(38,10)"),
        ("DEC(7)", "DECIMAL(7,0)"),
        ("DECIMAL", "DECIMAL(5,0)"),
        ("DECIMAL(39,2)", "STRING"),
        ("DECFLOAT(34)", "STRING"),
        ("DECFLOAT(16)", "STRING"),
        ("REAL", "FLOAT"),
        ("FLOAT", "DOUBLE"),
        ("FLOAT(53)", "DOUBLE"),
        ("DOUBLE", "DOUBLE"),
        ("DOUBLE PRECISION", "DOUBLE"),
        ("DATE", "DATE"),
        ("TIME", "STRING"),
        ("TIMESTAMP", "TIMESTAMP"),
        ("TIMESTAMP(6)", "TIMESTAMP"),
        ("TIMESTAMP(12)", "TIMESTAMP"),
        ("TIMESTAMP(6) WITH TIME ZONE", "TIMESTAMP"),
        ("CHAR(8) FOR BIT DATA", "BINARY"),
        ("VARCHAR(40) FOR BIT DATA", "BINARY"),
        ("BINARY(16)", "BINARY"),
        ("VARBINARY(100)", "BINARY"),
        ("LONG VARBINARY", "BINARY"),
        ("BLOB(1M)", "BINARY"),
        ("ROWID", "BINARY"),
        ("BOOLEAN", "BOOLEAN"),
        ("VARCHAR(40)", "STRING"),
        ("CHAR(8)", "STRING"),
        ("GRAPHIC(4) CCSID EBCDIC", "STRING"),
        ("CLOB(1M)", "STRING"),
        ("XML", "STRING"),
        ("WVARCHAR(10)", "STRING"),
        ("SOMETHING NEW", "STRING"),
        ("", "STRING"),
        (None, "STRING"),
        ("decimal(5,2)", "DECIMAL(5,2)"),
    ],
)
def test_source_types_map_to_spark_types(source_type, expected):
    assert spark_type(source_type) == expected


def test_text_to_typed_value_uses_try_cast_unhex_and_cuts_nanoseconds():
    assert typed_value_sql("v", "DECIMAL(5,2)") == "try_cast(v as decimal(5,2))"
    assert typed_value_sql("v", "INT") == "try_cast(v as int)"
    assert typed_value_sql("v", "BINARY") == "unhex(v)"
    assert typed_value_sql("v", "STRING") == "v"
    stamp = typed_value_sql("v", "TIMESTAMP")
    assert stamp.startswith("try_cast(regexp_replace(v,") and "[0-9]{6}" in stamp


def test_relation_names_follow_the_rule_and_clashes_get_a_hash():
    orders = SourceTable("db2zos", "PROD", "SALES", "ORDERS")
    upper = SourceTable("soliddb", "DB-1", "APP", "Order Lines")
    lower = SourceTable("soliddb", "DB-1", "app", "order lines")
    dash = SourceTable("soliddb", "DB_1", "APP", "ORDER-LINES")
    no_schema = SourceTable("db2luw", "SAMPLE", None, "T1")
    names = relation_names([orders, upper, lower, dash, no_schema])
    assert names[orders] == "db2zos__prod__sales__orders"
    assert names[no_schema] == "db2luw__sample____t1"
    assert (
        base_name(upper)
        == base_name(lower)
        == base_name(dash)
        == ("soliddb__db_1__app__order_lines")
    )
    for table in (upper, lower, dash):
        digest = hashlib.sha1(table.label.encode()).hexdigest()[:8]
        assert names[table] == f"soliddb__db_1__app__order_lines__{digest}"
    assert upper.label == "soliddb/DB-1/APP/Order Lines"
    assert len(set(names.values())) == 5


def test_columns_are_the_union_over_versions_typed_by_the_latest():
    columns = evolved_columns(
        [
            [("ID", "INTEGER"), ("AMOUNT", "DECIMAL(7,2)"), ("OLD", "CHAR(1)")],
            [("ID", "INTEGER"), ("AMOUNT", "DECIMAL(9,2)"), ("OLD", "CHAR(1)"), ("NEW", "DATE")],
            [("ID", "BIGINT"), ("AMOUNT", "DECIMAL(9,2)"), ("NEW", "DATE")],  # OLD dropped
        ]
    )
    assert [(c.name, c.source_type, c.spark_type) for c in columns] == [
        ("ID", "BIGINT", "BIGINT"),
        ("AMOUNT", "DECIMAL(9,2)", "DECIMAL(9,2)"),
        ("OLD", "CHAR(1)", "STRING"),
        ("NEW", "DATE", "DATE"),
    ]


def test_names_differing_only_in_case_or_clashing_with_ours_are_renamed():
    columns = evolved_columns([[("a", "INT"), ("A", "INT"), ("_change_type", "CHAR(1)")]])
    assert [(c.name, c.source_name) for c in columns] == [
        ("a", "a"),
        ("A__2", "A"),
        ("_change_type__2", "_change_type"),
    ]


def test_the_sql_function_takes_layouts_as_spark_gives_them():
    layouts = [
        [{"column_name": "ID", "column_type": "INTEGER"}],
        [
            {"column_name": "ID", "column_type": "INTEGER"},
            {"column_name": "D", "column_type": None},
        ],
    ]
    assert [tuple(c.values()) for c in typed_columns(layouts)] == [
        ("ID", "ID", "INTEGER", "INT"),
        ("D", "D", None, "STRING"),
    ]
    assert typed_columns(None) == []


def test_views_read_committed_changes_with_preimage_and_postimage_rows():
    table = SourceTable("db2zos", "PROD", "SALES", "O'NEIL")
    columns = evolved_columns([[("ID", "INTEGER"), ("AMT", "DECIMAL(7,2)"), ("N", "VARCHAR(9)")]])
    sql = changes_view_sql(table, columns, ["ID"])
    assert "disposition = 'committed'" in sql
    assert "table_name = 'O\\'NEIL'" in sql
    assert "'update_preimage' as t, before_image" in sql
    assert "'update_postimage' as t, after_image" in sql
    assert "try_cast(_i['AMT'] as decimal(7,2)) as `AMT`" in sql
    assert "to_json(array(_x.i['ID'])) as _row_key" in sql
    assert sql.startswith("select `ID`, `AMT`, `N`, _change_type, _commit_position")
    current = current_view_sql(table, columns)
    assert "from marts.fct_row_history where is_current" in current
    assert "_unavailable" in current


def test_warnings_name_the_column_and_why():
    columns = evolved_columns([[("TS", "TIMESTAMP(9)"), ("N", "VARCHAR(9)")]])
    sql = warnings_sql(columns)
    assert "' cannot be read as '" in sql and "'TS', 'TIMESTAMP'" in sql
    assert "fraction beyond microseconds cut" in sql
    assert warnings_sql(evolved_columns([[("N", "VARCHAR(9)")]])) == (
        "cast(array() as array<string>)"
    )


def test_net_changes_sql_is_the_macro_rendered_with_the_columns():
    sql = net_changes_sql("changes.x", "P1", "P'9", ["ID", "_change_type", "_commit_position"])
    assert "from changes.x" in sql
    assert "_commit_position >= 'P1'" in sql and "_commit_position <= 'P\\'9'" in sql
    assert "_net_change_type as _change_type" in sql
    assert sql.rstrip().endswith("from net")
