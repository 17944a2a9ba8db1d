"""DATA framing (interpretation 10): hand-laid bytes, errors, and agreement with construct."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from udfs.errors import DecodeError
from udfs.soliddb import data_format as fmt

from .handmade import field


def test_split_short_null_and_long_fields():
    long_value = b"s" * 300
    data = bytes.fromhex("0400000001") + b"\x00" + bytes.fromhex("fe2c010000") + long_value
    assert fmt.split_fields(data) == [b"\x00\x00\x00\x01", b"", long_value]


def test_empty_data_has_no_fields():
    assert fmt.split_fields(b"") == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x05abc", "DATA field 1 at byte 0 says 5 bytes, only 3 remain"),
        (b"\x01a\xff", "DATA field 2 at byte 2: length byte 0xFF is reserved"),
        (b"\xfe\x01\x00", "DATA field 1 at byte 0: the 4-byte length after 0xFE is cut short"),
        (b"\xfe\x10\x00\x00\x00abc", "DATA field 1 at byte 0 says 16 bytes, only 3 remain"),
    ],
)
def test_bad_framing_says_where(data, message):
    with pytest.raises(DecodeError, match=message.replace("(", r"\(")):
        fmt.split_fields(data)


@given(st.lists(st.one_of(st.none(), st.binary(max_size=600)), max_size=8))
def test_frame_then_split_round_trips(values):
    framed = fmt.frame_fields(values)
    assert framed == b"".join(field(v or b"") for v in values)
    assert fmt.split_fields(framed) == [v or b"" for v in values]


@given(st.binary(max_size=64))
def test_splitter_agrees_with_the_construct_layout(data):
    """On any bytes: both accept with the same fields, or both reject."""
    try:
        ours = fmt.split_fields(data)
    except DecodeError:
        ours = None
    try:
        theirs = [f.data for f in fmt.ROW_DATA.parse(data).fields]
    except Exception:
        theirs = None
    assert ours == theirs


@pytest.mark.parametrize(
    ("raw", "nullable", "empty_allowed", "expected"),
    [
        (b"x", True, True, b"x"),
        (b"", True, True, None),  # zero length in a nullable column: NULL
        (b"", False, True, b""),  # NOT NULL character/binary: the empty value
        (b"", True, False, None),
    ],
)
def test_field_value_null_rule(raw, nullable, empty_allowed, expected):
    assert fmt.field_value(raw, nullable=nullable, empty_allowed=empty_allowed) == expected


def test_zero_length_in_not_null_number_is_an_error():
    with pytest.raises(DecodeError, match="NOT NULL"):
        fmt.field_value(b"", nullable=False, empty_allowed=False)


def test_ddl_data():
    data = field(b"\x00\x00\x00\x49") + field(b"TMP.SCRATCH")
    assert fmt.split_ddl(data) == (73, b"TMP.SCRATCH")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (field(b"\x00\x00\x00\x2d"), "DDL DATA holds 1 fields, expected 2"),
        (field(b"\x2d") + field(b"T"), "DDL LOGRECID field is 1 bytes, expected 4"),
    ],
)
def test_bad_ddl_data(data, message):
    with pytest.raises(DecodeError, match=message):
        fmt.split_ddl(data)


def test_sql_data():
    assert fmt.split_sql(field(b"DROP TABLE T")) == b"DROP TABLE T"
    with pytest.raises(DecodeError, match="SQL DATA holds 2 fields"):
        fmt.split_sql(field(b"a") + field(b"b"))
