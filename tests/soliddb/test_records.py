"""Row values, DDL and SQL records decoded from hand-laid DATA bytes, every type of the spec."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs.errors import DecodeError
from udfs.soliddb.catalog import LayoutHistory, TableLayout, numbered
from udfs.soliddb.records import (
    NULL_LOGGED,
    NULL_NOT_IN_RECORD,
    decode_capture,
    decode_ddl_data,
    decode_record,
    decode_row_data,
    decode_sql_data,
    decode_value,
    record_kind,
)

from .handmade import col, field, logaddr, row

# (type, column options, value bytes laid out by hand, rendered text)
VALUES = [
    ("INTEGER", {}, bytes.fromhex("00000001"), "1"),
    ("INTEGER", {}, bytes.fromhex("80000000"), "-2147483648"),
    ("SMALLINT", {}, bytes.fromhex("ffff8000"), "-32768"),
    ("TINYINT", {}, bytes.fromhex("0000007f"), "127"),
    ("BIT", {}, bytes.fromhex("00000001"), "1"),
    ("BIGINT", {}, bytes.fromhex("7fffffffffffffff"), "9223372036854775807"),
    ("BIGINT", {}, bytes.fromhex("fffffffffffffffe"), "-2"),
    ("DOUBLE PRECISION", {}, bytes.fromhex("4097720000000000"), "1500.5"),
    ("FLOAT", {}, bytes.fromhex("3fb999999999999a"), "0.1"),
    ("FLOAT", {}, bytes.fromhex("8000000000000000"), "-0.0"),
    # REAL is stored as the 8-byte double of a float32: shown as the float32's shortest text.
    ("REAL", {}, bytes.fromhex("3fb99999a0000000"), "0.1"),
    ("REAL", {}, bytes.fromhex("4029000000000000"), "12.5"),
    ("DATE", {}, bytes.fromhex("07e8021d00000000000000"), "2024-02-29"),
    ("TIME", {}, bytes.fromhex("00000000173b3b00000000"), "23:59:59"),
    ("TIMESTAMP", {}, bytes.fromhex("07e8021d0d2d07075bca00"), "2024-02-29 13:45:07.123456000"),
    ("TIMESTAMP", {}, bytes.fromhex("07b2010100000000000000"), "1970-01-01 00:00:00.000000000"),
    ("TIMESTAMP", {}, bytes.fromhex("270f0c1f173b3b3b9ac9ff"), "9999-12-31 23:59:59.999999999"),
    ("NUMERIC", {"precision": 12, "scale": 2}, b"52750.5", "52750.50"),
    ("NUMERIC", {"precision": 12, "scale": 2}, b"-0.01", "-0.01"),
    ("DECIMAL", {"precision": 12, "scale": 2}, b"1.5E+3", "1500.00"),
    ("DECIMAL", {"precision": 10, "scale": 0}, b"42", "42"),
    ("DECIMAL", {"precision": 10, "scale": 3}, b"-0", "0.000"),
    ("DECIMAL", {}, b"3.14159", "3.14159"),  # scale unknown: as logged
    ("CHAR", {"length": 6}, b"abc   ", "abc   "),  # not trimmed
    ("VARCHAR", {"length": 20}, "café".encode(), "café"),
    ("LONG VARCHAR", {}, b"x" * 300, "x" * 300),
    ("WCHAR", {"length": 2}, "北京".encode("utf-16-be"), "北京"),
    ("WVARCHAR", {"length": 20}, "Zoë".encode("utf-16-be"), "Zoë"),
    ("LONG WVARCHAR", {}, "ab".encode("utf-16-be"), "ab"),
    ("BINARY", {"length": 2}, b"\x00\xff", "00FF"),
    ("VARBINARY", {"length": 9}, b"\xde\xad\xbe\xef", "DEADBEEF"),
    ("LONG VARBINARY", {}, b"\x01" * 260, "01" * 260),
]


@pytest.mark.parametrize(("sql_type", "options", "raw", "text"), VALUES)
def test_every_type_in_a_hand_laid_row(sql_type, options, raw, text):
    columns = numbered([col("ID", "INTEGER", nullable=False), col("V", sql_type, **options)])
    data = field(bytes.fromhex("00000007")) + field(raw)
    values, reasons = decode_row_data(data, columns)
    assert values == {"ID": "7", "V": text}
    assert reasons == {}


def test_integer_one_and_a_null_by_hand():
    columns = numbered([col("A", "INTEGER"), col("B", "VARCHAR")])
    values, reasons = decode_row_data(bytes.fromhex("04 00000001 00"), columns)
    assert values == {"A": "1", "B": None}
    assert reasons == {"B": NULL_LOGGED}


def test_300_byte_string_uses_the_long_length():
    columns = numbered([col("S", "VARCHAR", length=400)])
    data = bytes.fromhex("fe 2c010000") + b"q" * 300
    assert decode_row_data(data, columns)[0] == {"S": "q" * 300}


def test_not_null_text_column_reads_zero_length_as_empty():
    columns = numbered(
        [col("CODE", "VARCHAR", nullable=False), col("BIN", "VARBINARY", nullable=False)]
    )
    assert decode_row_data(b"\x00\x00", columns) == ({"CODE": "", "BIN": ""}, {})


def test_trailing_columns_missing_from_the_record_are_null_not_in_record():
    columns = numbered([col("A", "INTEGER"), col("ADDED", "TIMESTAMP")])
    values, reasons = decode_row_data(field(b"\0\0\0\1"), columns)
    assert values == {"A": "1", "ADDED": None}
    assert reasons == {"ADDED": NULL_NOT_IN_RECORD}


@pytest.mark.parametrize(
    ("columns", "data", "message"),
    [
        (
            [col("A", "INTEGER")],
            field(b"\0\0\0\1") + field(b"x"),
            "DATA holds 2 fields but the table layout has 1 columns",
        ),
        ([col("A", "INTEGER")], field(b"\0\1"), r"column A \(INTEGER\): INTEGER value is 4 bytes"),
        ([col("A", "BIGINT")], field(b"\0\0\0\1"), r"column A \(BIGINT\): BIGINT value is 8"),
        ([col("D", "DOUBLE PRECISION")], field(b"\0" * 4), r"column D .*8 bytes, got 4"),
        ([col("T", "TIMESTAMP")], field(b"\0" * 10), r"column T .*11 bytes, got 10"),
        (
            [col("T", "DATE")],
            field(bytes.fromhex("07e8021e00000000000000")),
            r"column T \(DATE\): '2024-02-30' is not a valid date",
        ),
        (
            [col("T", "TIME")],
            field(bytes.fromhex("0000000019000000000000")),
            r"column T \(TIME\): '25:00:00' is not a valid time",
        ),
        (
            [col("T", "TIMESTAMP")],
            field(bytes.fromhex("07e8021d0d2d073b9aca00")),
            r"column T .*fraction 1000000000",
        ),
        ([col("N", "NUMERIC", scale=2)], field(b"1.234"), r"column N .*more fraction digits"),
        ([col("N", "NUMERIC", scale=2)], field(b"12,5"), r"column N .*not a number"),
        ([col("S", "VARCHAR")], field(b"\xff\xfe"), r"column S \(VARCHAR\): bytes FFFE are not"),
        ([col("W", "WCHAR")], field(b"\x00"), r"column W \(WCHAR\): bytes 00 are not valid"),
        ([col("G", "GEOMETRY")], field(b"x"), r"column G \(GEOMETRY\): type GEOMETRY has no"),
        ([col("A", "INTEGER", nullable=False)], b"\x00", r"column A .*NOT NULL"),
        ([col("A", "INTEGER")], b"\x09\x00", "says 9 bytes, only 1 remain"),
    ],
)
def test_bad_bytes_raise_decode_error_naming_the_column(columns, data, message):
    with pytest.raises(DecodeError, match=message):
        decode_row_data(data, numbered(columns))


def test_codecs_are_settings():
    column = col("S", "VARCHAR")
    assert decode_value(b"caf\xe9", column, char_codec="latin-1") == "café"
    wide = col("W", "WVARCHAR")
    assert decode_value("é".encode("utf-16-le"), wide, wchar_codec="utf-16-le") == "é"


ANY_COLUMNS = numbered(
    [
        col(f"C{i}", t)
        for i, t in enumerate(
            [
                "INTEGER",
                "BIGINT",
                "DOUBLE PRECISION",
                "REAL",
                "DATE",
                "TIME",
                "TIMESTAMP",
                "NUMERIC",
                "VARCHAR",
                "WVARCHAR",
                "VARBINARY",
            ]
        )
    ]
)


@settings(max_examples=400)
@given(st.binary(max_size=80))
def test_random_bytes_raise_only_decode_error(data):
    try:
        decode_row_data(data, ANY_COLUMNS)
    except DecodeError:
        pass


# --- DDL and SQL records ------------------------------------------------------------------------


def test_ddl_record_data():
    data = field(bytes.fromhex("0000002d")) + field(b"SHOP.Inventory")
    assert decode_ddl_data(data) == {
        "logrecid": 45,
        "ddl_operation": "create_table",
        "info": "SHOP.Inventory",
    }


def test_unknown_logrecid_is_kept():
    data = field(bytes.fromhex("00000063")) + field(b"X")
    assert decode_ddl_data(data)["ddl_operation"] is None


def test_sql_record_data():
    assert decode_sql_data(field(b"DROP TABLE T")) == "DROP TABLE T"


@pytest.mark.parametrize(
    ("recid", "flags", "kind"),
    [
        (None, 0, "nop"),
        (None, None, "nop"),
        (0, 0, "nop"),
        (0, 2, "empty"),
        (1, 1, "insert"),
        (3, 1, "update"),
        (4, 1, "delete"),
        (5, 1, "update_before"),
        (6, 1, "sql"),
        (7, 0, "trx_start"),
        (7, 64, "trx_start"),
        (12, 0, "commit"),
        (13, 1, "ddl"),
        (99, 1, "unknown"),
        (None, 1, "unknown"),
    ],
)
def test_record_kind(recid, flags, kind):
    assert record_kind(recid, flags) == kind


CUSTOMERS = TableLayout(
    10,
    "SHOP",
    "CUSTOMERS",
    numbered([col("ID", "INTEGER", nullable=False, key=1), col("NAME", "VARCHAR")]),
)


def test_decode_record_row():
    history = LayoutHistory([CUSTOMERS])
    data = field(struct.pack(">i", 5)) + field(b"Ann")
    out = decode_record(row(1, 77, 3, relid=10, data=data, stmttrxid=2), history)
    assert out["record_kind"] == "insert"
    assert out["recname"] == "DBE_LOGREADER_LOG_REC_INSERT"
    assert (out["table_schema"], out["table_name"]) == ("SHOP", "CUSTOMERS")
    assert out["values"] == {"ID": "5", "NAME": "Ann"}
    assert out["logaddr_hex"] == logaddr(3).hex().upper()
    assert out["decode_error"] is None


def test_decode_record_errors_are_kept_with_the_place():
    history = LayoutHistory([CUSTOMERS])
    out = decode_record(row(1, 77, 3, relid=11, data=b"\x00"), history)
    assert out["decode_error"].startswith("no table layout for RELID 11")
    assert "RECID 1 at LOGADDR 0000000000000001FFFFFFFF0000000300000003" in out["decode_error"]
    missing = decode_record(row(3, 77, 4, relid=10, data=None), history)
    assert missing["decode_error"].startswith("DBE_LOGREADER_LOG_REC_UPDATE has no DATA")


def test_reader_error_is_carried_and_nothing_more_decoded():
    out = decode_record(
        row(None, None, 0, flags=None, decode_error="line 3 is not JSON"), LayoutHistory()
    )
    assert out["record_kind"] == "unknown"
    assert out["decode_error"] == "line 3 is not JSON"


def test_capture_applies_logged_ddl_before_later_rows():
    """CREATE TABLE via DDL + SQL records (RELID from the DDL record), rows, ALTER, rows."""
    create = "CREATE TABLE S.T (ID INTEGER PRIMARY KEY, NAME VARCHAR(10))"
    alter = "ALTER TABLE S.T ADD COLUMN N BIGINT"
    one = struct.pack(">i", 1)
    rows = [
        row(7, 5, 1, flags=0),
        row(13, 5, 2, relid=77, stmttrxid=9, data=field(bytes.fromhex("0000002d")) + field(b"S.T")),
        row(6, 5, 3, stmttrxid=9, data=field(create.encode())),
        row(1, 5, 4, relid=77, data=field(one) + field(b"a")),
        row(13, 5, 5, relid=77, stmttrxid=10, data=field(bytes.fromhex("00000016")) + field(b"T")),
        row(6, 5, 6, stmttrxid=10, data=field(alter.encode())),
        row(
            1,
            5,
            7,
            relid=77,
            data=field(struct.pack(">i", 2)) + field(b"b") + field(struct.pack(">q", 3)),
        ),
        row(12, 5, 8, flags=0),
    ]
    decoded, history = decode_capture(reversed(rows))  # order comes from LOGADDR
    assert [r["record_kind"] for r in decoded] == [
        "trx_start",
        "ddl",
        "sql",
        "insert",
        "ddl",
        "sql",
        "insert",
        "commit",
    ]
    assert decoded[1]["table_name"] == "T"
    assert decoded[2]["sql_kind"] == "create_table"
    assert decoded[3]["values"] == {"ID": "1", "NAME": "a"}
    assert decoded[6]["values"] == {"ID": "2", "NAME": "b", "N": "3"}
    assert [c.name for c in history.layout_at(77, logaddr(9)).columns] == ["ID", "NAME", "N"]
    assert all(r["decode_error"] is None for r in decoded)


def test_capture_bad_sql_is_a_decode_error_not_a_crash():
    rows = [row(6, 5, 1, data=field(b"ALTER TABLE NOPE ADD X INT"))]
    decoded, _ = decode_capture(rows)
    assert "table NOPE is not known" in decoded[0]["decode_error"]
