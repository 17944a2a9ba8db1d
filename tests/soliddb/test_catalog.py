"""Catalog exports and the layout history (layout in force at each LOGADDR)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs.errors import DecodeError
from udfs.soliddb.catalog import Column, LayoutHistory, TableLayout, read_catalog
from udfs.soliddb.ddl_sql import parse_statement

from .handmade import logaddr


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "catalog"
    write(
        folder / "SYS_TABLES.csv",
        "\ufeffid,TABLE_NAME,TABLE_TYPE,SCHEMA,CATALOG\n"
        "10,CUSTOMERS,BASE TABLE,SHOP,DBA\n"
        "11,Empty One,BASE TABLE,,DBA\n",
    )
    write(
        folder / "SYS_COLUMNS.csv",
        "ID,REL_ID,COLUMN_NAME,DATA_TYPE,DATA_TYPE_NUMBER,CHAR_MAX_LENGTH,NUMERIC_PRECISION,"
        "NUMERIC_SCALE,NULLABLE,COLUMN_NUMBER,REMARKS\n"
        "1,10,CREDIT,NUMERIC,2,,12,2,YES,3,\n"
        "2,10,ID,INTEGER,4,,10,0,NO,1,\n"
        "3,10,NAME,VARCHAR,12,40,,,YES,2,x\n"
        "4,10,ROWID,BINARY,-2,8,,,NO,0,\n"
        "5,10,CITY,,-9,30,,,Y,4,\n",
    )
    return folder


def test_read_catalog(catalog_dir: Path):
    layouts = read_catalog(catalog_dir)
    customers, empty = layouts
    assert (customers.rel_id, customers.schema, customers.name) == (10, "SHOP", "CUSTOMERS")
    assert customers.columns == (
        Column("ID", "INTEGER", None, 10, None, False, 1),
        Column("NAME", "VARCHAR", 40, None, None, True, 2),
        Column("CREDIT", "NUMERIC", None, 12, 2, True, 3),
        Column("CITY", "WVARCHAR", 30, None, None, True, 4),
    )
    assert (empty.schema, empty.name, empty.columns) == (None, "Empty One", ())


def test_catalog_missing_column_is_said(tmp_path: Path):
    write(tmp_path / "SYS_TABLES.csv", "ID,NAME\n1,T\n")
    with pytest.raises(DecodeError, match=r"SYS_TABLES\.csv lacks the column"):
        read_catalog(tmp_path)


def test_catalog_bad_number_is_said(catalog_dir: Path):
    write(catalog_dir / "SYS_TABLES.csv", "ID,TABLE_NAME\nten,T\n")
    with pytest.raises(DecodeError, match="ID 'ten' is not a whole number"):
        read_catalog(catalog_dir)


BASE = TableLayout(
    10,
    "S",
    "T",
    (
        Column("ID", "INTEGER", nullable=False, position=1, key=1),
        Column("A", "VARCHAR", length=5, position=2),
    ),
)


def names(layout: TableLayout | None) -> list[str] | None:
    return None if layout is None else [c.name for c in layout.columns]


def test_history_gives_the_layout_in_force_at_each_position():
    history = LayoutHistory([BASE])
    history.apply_sql(logaddr(10), "ALTER TABLE S.T ADD COLUMN B INTEGER")
    history.apply_sql(logaddr(20), "ALTER TABLE T DROP COLUMN A")
    history.apply_sql(logaddr(30), "ALTER TABLE S.T RENAME COLUMN B C")
    history.apply_sql(logaddr(40), "RENAME TABLE S.T TO S.U")
    history.apply_sql(logaddr(50), "DROP TABLE S.U")
    assert names(history.layout_at(10, logaddr(5))) == ["ID", "A"]
    assert names(history.layout_at(10, logaddr(10))) == ["ID", "A"]  # the statement itself
    assert names(history.layout_at(10, logaddr(11))) == ["ID", "A", "B"]
    assert names(history.layout_at(10, logaddr(25))) == ["ID", "B"]
    assert [c.position for c in history.layout_at(10, logaddr(25)).columns] == [1, 2]
    assert names(history.layout_at(10, logaddr(35))) == ["ID", "C"]
    assert history.layout_at(10, logaddr(45)).qualified_name == "S.U"
    assert history.layout_at(10, logaddr(51)) is None
    assert history.rel_id_at("S", "T", logaddr(35)) == 10
    assert history.rel_id_at(None, "U", logaddr(45)) == 10


def test_logaddr_order_is_binary_not_by_the_last_counter():
    history = LayoutHistory([BASE])
    history.apply_sql(logaddr(0x500, generation=1), "ALTER TABLE S.T ADD B INT")
    assert names(history.layout_at(10, logaddr(0x100, generation=2))) == ["ID", "A", "B"]


def test_create_table_uses_the_given_relid_and_its_keys():
    history = LayoutHistory()
    created = history.apply_sql(
        logaddr(1), "CREATE TABLE X.Y (K BIGINT, V CHAR(2), PRIMARY KEY (K))", rel_id=99
    )
    assert created.kind == "create_table"
    layout = history.layout_at(99, logaddr(2))
    assert layout.origin == "sql"
    assert [(c.name, c.key, c.nullable) for c in layout.key_columns] == [("K", 1, False)]
    history.apply_sql(logaddr(3), "ALTER TABLE X.Y ADD PRIMARY KEY (V, K)")
    assert [c.name for c in history.layout_at(99, logaddr(4)).key_columns] == ["V", "K"]


def test_create_table_without_relid_gets_a_stand_in_and_alters_still_apply():
    history = LayoutHistory()
    history.apply_sql(logaddr(1), "CREATE TABLE Q (A INT)")
    history.apply_sql(logaddr(2), "ALTER TABLE Q ADD B INT")
    (rel_id,) = history.versions()
    assert rel_id < 0
    assert names(history.layout_at(rel_id, logaddr(3))) == ["A", "B"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("ALTER TABLE NOPE ADD B INT", "table NOPE is not known"),
        ("ALTER TABLE S.T DROP COLUMN ZZ", "has no column ZZ"),
        ("ALTER TABLE S.T ADD A INT", "already has column A"),
    ],
)
def test_history_errors(sql, message):
    history = LayoutHistory([BASE])
    with pytest.raises(DecodeError, match=message):
        history.apply_sql(logaddr(1), sql)


def test_history_must_be_fed_in_log_order():
    history = LayoutHistory([BASE])
    history.apply(logaddr(5), parse_statement("ALTER TABLE S.T ADD B INT"))
    with pytest.raises(ValueError, match="LOGADDR order"):
        history.apply(logaddr(4), parse_statement("ALTER TABLE S.T ADD C INT"))


def test_truncate_and_other_statements_keep_the_layout():
    history = LayoutHistory([BASE])
    history.apply_sql(logaddr(1), "TRUNCATE TABLE S.T")
    history.apply_sql(logaddr(2), "CREATE INDEX I ON S.T (A)")
    assert len(history.versions()[10]) == 1


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            [
                "CREATE",
                "ALTER",
                "TABLE",
                "ADD",
                "DROP",
                "RENAME",
                "TO",
                "COLUMN",
                "PRIMARY",
                "KEY",
                "NOT",
                "NULL",
                "(",
                ")",
                ",",
                "S",
                ".",
                "T",
                "ID",
                "A",
                "B",
                "INT",
                "MODIFY",
                "RENAME TABLE S.T TO",
                "ALTER TABLE S.T",
                "CREATE TABLE S.T (",
            ]
        ),
        max_size=14,
    )
)
def test_any_statement_applies_or_raises_decode_error(words):
    history = LayoutHistory([BASE])
    try:
        history.apply_sql(logaddr(1), " ".join(words), rel_id=None)
    except DecodeError:
        pass


def test_column_types_as_ddl_spells_them():
    assert [
        Column(n, t, length=length, precision=precision, scale=scale).ddl_type
        for n, t, length, precision, scale in [
            ("A", "VARCHAR", 40, None, None),
            ("B", "NUMERIC", None, 12, 2),
            ("C", "DECIMAL", None, 5, None),
            ("D", "LONG VARCHAR", 2000, None, None),
            ("E", "INTEGER", None, 10, None),
            ("F", "WCHAR", 4, None, None),
            ("G", "VARBINARY", None, None, None),
        ]
    ] == [
        "VARCHAR(40)",
        "NUMERIC(12,2)",
        "DECIMAL(5,0)",
        "LONG VARCHAR",
        "INTEGER",
        "WCHAR(4)",
        "VARBINARY",
    ]
