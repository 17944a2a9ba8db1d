"""SYS_LOG layouts: code tables, FLAGS, type table, and every construct Struct checked four ways."""

from __future__ import annotations

import struct

import pytest
from construct import Construct

from udfs.soliddb import data_format as fmt
from udfs.soliddb import layouts as lay


def check_four_ways(layout: Construct, data: bytes, obj: dict, sizeof: int | None = None) -> None:
    """parse(bytes) == obj, build(obj) == bytes, sizeof where fixed; then the compiled form."""
    for form in (layout, layout.compile()):
        assert _plain(form.parse(data)) == obj
        assert form.build(obj) == data
        if sizeof is not None:
            assert form.sizeof() == sizeof


def _plain(value):
    """construct Containers/ListContainers -> dicts/lists without construct's private keys."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _field(data: bytes) -> dict:
    lead = len(data) if len(data) < 0xFE else 0xFE
    return {"lead": lead, "length": len(data), "data": data}


CASES = [
    # name, layout, bytes, object, fixed size
    (
        "double 1500.5",
        lay.DOUBLE_FLOAT_VALUE,
        bytes.fromhex("4097720000000000"),
        {"value": 1500.5},
        8,
    ),
    ("integer 1", lay.INTEGER_VALUE, bytes.fromhex("00000001"), {"value": 1}, 4),
    ("integer -1", lay.INTEGER_VALUE, bytes.fromhex("ffffffff"), {"value": -1}, 4),
    ("bigint -2", lay.BIGINT_VALUE, bytes.fromhex("fffffffffffffffe"), {"value": -2}, 8),
    (
        "timestamp",
        lay.DATE_VALUE,
        bytes.fromhex("07e8021d0d2d07075bca00"),
        {
            "year": 2024,
            "month": 2,
            "day": 29,
            "hour": 13,
            "minute": 45,
            "second": 7,
            "fraction": 123456000,
        },
        11,
    ),
    ("field short", fmt.DATA_FIELD, bytes.fromhex("0400000001"), _field(b"\0\0\0\1"), None),
    ("field null", fmt.DATA_FIELD, b"\x00", _field(b""), None),
    ("field 253", fmt.DATA_FIELD, b"\xfd" + b"a" * 253, _field(b"a" * 253), None),
    (
        "field 300 (0xFE)",
        fmt.DATA_FIELD,
        b"\xfe\x2c\x01\x00\x00" + b"x" * 300,
        _field(b"x" * 300),
        None,
    ),
    (
        "row",
        fmt.ROW_DATA,
        bytes.fromhex("0400000001") + b"\x00\x02hi",
        {"fields": [_field(b"\0\0\0\1"), _field(b""), _field(b"hi")]},
        None,
    ),
    (
        "ddl create table",
        fmt.DDL_DATA,
        bytes.fromhex("040000002d") + b"\x06SHOP.T",
        {"logrecid_length": 4, "logrecid": 45, "info": _field(b"SHOP.T")},
        None,
    ),
    ("sql", fmt.SQL_DATA, b"\x0eDROP TABLE S.T", {"sql": _field(b"DROP TABLE S.T")}, None),
]


@pytest.mark.parametrize(
    ("name", "layout", "data", "obj", "size"), CASES, ids=[c[0] for c in CASES]
)
def test_layout_four_ways(name, layout, data, obj, size):
    check_four_ways(layout, data, obj, size)


def test_recid_table_matches_spec():
    expected = {
        0: "EMPTY",
        1: "INSERT",
        3: "UPDATE",
        4: "DELETE_FULL",
        5: "UPDATE_BEFOREIMAGE",
        6: "SQL",
        7: "TRX_START",
        12: "COMMIT",
        13: "DDL",
    }
    assert {r.value: r.name for r in lay.RecId} == expected
    assert lay.RecId.UPDATE_BEFOREIMAGE.recname == "DBE_LOGREADER_LOG_REC_UPDATE_BEFOREIMAGE"


def test_ddl_logrecid_table_matches_spec():
    expected = {
        45: "create_table",
        17: "drop_table",
        47: "rename_table",
        22: "alter_table",
        73: "truncate_table",
        16: "create_index",
        18: "drop_index",
        46: "create_view",
        20: "drop_view",
        28: "create_sequence",
        30: "drop_sequence",
        27: "create_counter",
        29: "drop_counter",
    }
    assert {d.value: d.operation for d in lay.DdlLogRecId} == expected
    assert set(lay.DDL_INFO_MEANING) == set(lay.DdlLogRecId)


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        (0, ["NOP"]),
        (1, ["DATA"]),
        (2, ["SHUTDOWN"]),
        (64, ["CAPTURE_OFF"]),
        (65, ["DATA", "CAPTURE_OFF"]),
        (1 | 8, ["DATA", "BIT3"]),
    ],
)
def test_flag_names(flags, names):
    assert lay.flag_names(flags) == names


def test_type_table_covers_every_sql_type_of_the_spec():
    spec_types = [
        "CHAR",
        "VARCHAR",
        "LONG VARCHAR",
        "WCHAR",
        "WVARCHAR",
        "LONG WVARCHAR",
        "BINARY",
        "VARBINARY",
        "LONG VARBINARY",
        "FLOAT",
        "REAL",
        "DOUBLE PRECISION",
        "BIT",
        "TINYINT",
        "BIGINT",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "NUMERIC",
        "DECIMAL",
    ]
    assert set(spec_types) <= set(lay.TYPE_ENCODINGS)
    assert lay.FIXED_WIDTHS == {
        lay.Encoding.DOUBLE_FLOAT: 8,
        lay.Encoding.INTEGER: 4,
        lay.Encoding.BIGINT: 8,
        lay.Encoding.DATE: 11,
    }


@pytest.mark.parametrize(
    ("spelled", "canonical"),
    [
        ("int", "INTEGER"),
        ("double", "DOUBLE PRECISION"),
        ("character  varying", "VARCHAR"),
        ("long   varchar", "LONG VARCHAR"),
        (4, "INTEGER"),
        ("-9", "WVARCHAR"),
        (93, "TIMESTAMP"),
        ("geometry", "GEOMETRY"),
    ],
)
def test_canonical_sql_type(spelled, canonical):
    assert lay.canonical_sql_type(spelled) == canonical


def test_struct_value_encodings_agree_with_plain_struct():
    assert lay.DATE_VALUE.build(
        {
            "year": 1999,
            "month": 12,
            "day": 31,
            "hour": 23,
            "minute": 59,
            "second": 58,
            "fraction": 7,
        }
    ) == struct.pack(">HBBBBBI", 1999, 12, 31, 23, 59, 58, 7)


def test_sys_log_schema_columns_in_spec_order():
    assert lay.SYS_LOG_COLUMN_NAMES == (
        "RECID",
        "RECNAME",
        "TRXID",
        "STMTTRXID",
        "RELID",
        "FLAGS",
        "LOGADDR",
        "DATA",
        "TEXTDATA",
    )
    assert lay.sys_log_arrow_schema().names[0] == "recid"
