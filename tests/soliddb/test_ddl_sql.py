"""The DDL text parser: CREATE / ALTER / RENAME / DROP / TRUNCATE TABLE and the rest."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs.errors import DecodeError
from udfs.soliddb.ddl_sql import ColumnDef, parse_statement, tokenize


def test_create_table_with_types_constraints_and_quoted_names():
    statement = parse_statement(
        'CREATE TABLE shop."Inventory" (\n'
        '  "Sku" VARCHAR(20) NOT NULL,  -- the key\n'
        "  qty INT DEFAULT 0,\n"
        "  price NUMERIC(8, 2),\n"
        "  note LONG VARCHAR,\n"
        "  wide WVARCHAR(5) DEFAULT 'NOT NULL',\n"
        "  ratio DOUBLE PRECISION NOT NULL CHECK (ratio IS NOT NULL),\n"
        '  CONSTRAINT pk_inv PRIMARY KEY ("Sku")\n'
        ") STORE DISK;"
    )
    assert (statement.kind, statement.schema, statement.table) == (
        "create_table",
        "SHOP",
        "Inventory",
    )
    assert statement.primary_key == ("Sku",)
    assert statement.columns == (
        ColumnDef("Sku", "VARCHAR", length=20, nullable=False, primary_key=True),
        ColumnDef("QTY", "INTEGER"),
        ColumnDef("PRICE", "NUMERIC", precision=8, scale=2),
        ColumnDef("NOTE", "LONG VARCHAR"),
        ColumnDef("WIDE", "WVARCHAR", length=5),
        ColumnDef("RATIO", "DOUBLE PRECISION", nullable=False),
    )


def test_inline_primary_key_is_not_null():
    statement = parse_statement("create table t (id integer primary key, d decimal(10))")
    assert statement.columns == (
        ColumnDef("ID", "INTEGER", nullable=False, primary_key=True),
        ColumnDef("D", "DECIMAL", precision=10, scale=0),
    )
    assert statement.primary_key == ("ID",)


def test_composite_table_key_and_catalog_qualified_name():
    statement = parse_statement(
        "CREATE GLOBAL TEMPORARY TABLE dba.shop.lines (a INT, b SMALLINT, PRIMARY KEY (a, b))"
    )
    assert (statement.schema, statement.table) == ("SHOP", "LINES")
    assert [c.primary_key for c in statement.columns] == [True, True]
    assert statement.primary_key == ("A", "B")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("ALTER TABLE S.T ADD COLUMN c TIMESTAMP", ("add_column", "C", None)),
        ("alter table t add c char(3) not null", ("add_column", "C", None)),
        ("ALTER TABLE T DROP COLUMN c", ("drop_column", "C", None)),
        ("ALTER TABLE T DROP c CASCADE", ("drop_column", "C", None)),
        ("ALTER TABLE T RENAME COLUMN a b", ("rename_column", "A", "B")),
        ('ALTER TABLE T RENAME "a" TO "Bee"', ("rename_column", "a", "Bee")),
        ("ALTER TABLE T MODIFY COLUMN c VARCHAR(99)", ("modify_column", "C", None)),
        ("ALTER TABLE T RENAME TO U", ("rename_table", None, "U")),
        ("ALTER TABLE T ADD CONSTRAINT pk PRIMARY KEY (a)", ("add_primary_key", None, None)),
        ("ALTER TABLE T ADD CONSTRAINT u UNIQUE (a)", ("other", None, None)),
        ("ALTER TABLE T DROP CONSTRAINT u", ("other", None, None)),
        ("ALTER TABLE T SET STORE MEMORY", ("other", None, None)),
    ],
)
def test_alter_table(sql, expected):
    statement = parse_statement(sql)
    assert (statement.kind, statement.column, statement.new_name) == expected


def test_add_column_carries_its_definition():
    statement = parse_statement("ALTER TABLE T ADD c NUMERIC(5,1) NOT NULL")
    assert statement.columns == (ColumnDef("C", "NUMERIC", precision=5, scale=1, nullable=False),)


@pytest.mark.parametrize(
    ("sql", "kind", "schema", "table", "new"),
    [
        ("RENAME TABLE a.b TO a.c", "rename_table", "A", "B", "C"),
        ('DROP TABLE "x".y', "drop_table", "x", "Y", None),
        ("TRUNCATE TABLE TMP.SCRATCH", "truncate_table", "TMP", "SCRATCH", None),
    ],
)
def test_rename_drop_truncate(sql, kind, schema, table, new):
    statement = parse_statement(sql)
    assert (statement.kind, statement.schema, statement.table, statement.new_name) == (
        kind,
        schema,
        table,
        new,
    )


@pytest.mark.parametrize(
    ("sql", "verb"),
    [
        ("CREATE UNIQUE INDEX i ON t (a)", "CREATE UNIQUE INDEX"),
        ("CREATE VIEW v AS SELECT * FROM t", "CREATE VIEW"),
        ("DROP SEQUENCE s", "DROP SEQUENCE"),
        ("CREATE COUNTER c", "CREATE COUNTER"),
        ("COMMENT ON TABLE t IS 'x'", "COMMENT ON TABLE"),
    ],
)
def test_other_statements_change_no_layout(sql, verb):
    statement = parse_statement(sql)
    assert statement.kind == "other"
    assert statement.verb == verb
    assert not statement.changes_layout


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("", "empty"),
        ("CREATE TABLE t (a INT", "ends too early"),
        ("CREATE TABLE t ()", "empty item"),
        ("CREATE TABLE t (a VARCHAR(x))", "whole number"),
        ("CREATE TABLE t (a INT, PRIMARY KEY (b))", "unknown columns"),
        ("CREATE TABLE 'x' (a INT)", "expected a name"),
        ("CREATE TABLE t (a VARCHAR(5) DEFAULT 'oops)", "unterminated"),
    ],
)
def test_malformed_table_ddl_is_a_decode_error(sql, message):
    with pytest.raises(DecodeError, match=message):
        parse_statement(sql)


def test_tokenizer_keeps_quotes_and_drops_comments():
    tokens = tokenize("a /* c */ \"q\"\"x\" 's''t' 1.5e3 ;")
    assert [(t.kind, t.text) for t in tokens] == [
        ("word", "a"),
        ("qident", '"q""x"'),
        ("string", "'s''t'"),
        ("number", "1.5e3"),
        ("punct", ";"),
    ]


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
                ".",
                "t",
                '"q"',
                "'s'",
                "5",
                "INT",
                "VARCHAR",
                "MODIFY",
                "CONSTRAINT",
                "TRUNCATE",
                "LONG",
                ";",
            ]
        ),
        max_size=14,
    )
)
def test_any_token_soup_parses_or_raises_decode_error(words):
    try:
        parse_statement(" ".join(words))
    except DecodeError:
        pass


@given(st.text(max_size=60))
def test_any_text_parses_or_raises_decode_error(text):
    try:
        parse_statement(text)
    except DecodeError:
        pass
