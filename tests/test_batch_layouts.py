"""udfs.batch: the one field table every source's batch decoders read, derived from construct
Structs (udfs.fields types, construct integers, fixed Bytes, nested Structs), and the byte
access over Arrow binary columns they share. Expected offsets are written out by hand."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from construct import Bytes, GreedyBytes, Int8ub, Int16sl, Int16ub, Int32ul, Int64ub, Struct

from udfs import fields
from udfs.batch import binary_buffers, field_specs, layout_fields, struct_format, uints
from udfs.logmaster.layouts import LLDF_HEADER


def _table(specs):
    return [(s.name, s.offset, s.width, s.kind, s.code, s.byteorder) for s in specs]


def test_construct_integers_bytes_and_nested_structs_flatten_in_order():
    inner = Struct("part1" / Int64ub, "part2" / Bytes(3))
    layout = Struct("length" / Int32ul, "kind" / Int16sl, "lri" / inner, "flag" / Int8ub)
    assert _table(layout_fields(layout)) == [
        ("length", 0, 4, "uint", "L", "little"),
        ("kind", 4, 2, "int", "h", "little"),
        ("part1", 6, 8, "uint", "Q", "big"),
        ("part2", 14, 3, "bytes", "3s", "big"),
        ("flag", 17, 1, "uint", "B", "big"),
    ]
    assert struct_format(layout_fields(layout), "little") == "<LhQ3sB"


def test_leading_fields_stop_at_the_first_variable_part_even_inside_a_nested_struct():
    tail = Struct("count" / Int16ub, "text" / GreedyBytes)
    layout = Struct("id" / Int16ub, "tail" / tail, "after" / Int32ul)
    assert [(s.name, s.offset) for s in layout_fields(layout, leading=True)] == [
        ("id", 0),
        ("count", 2),
    ]
    with pytest.raises(TypeError, match="text: only fixed-size fields"):
        layout_fields(layout)


def test_log_master_header_fields_keep_their_kinds_and_leave_reserved_out():
    """LLDF header (003_…, 288 bytes): LENGTH BIN(2) at 0, SYSTEMID CHAR(4) at 2, DBNAME CHAR(8)
    at 16, TABLENAME CHAR(18) at 40, TIMESTAMP BIN(17) at 60, LOGLRSN at 77, LOGRBA at 87; four
    reserved bytes at 188 (0xBC)."""
    every = {s.name: (s.offset, s.width, s.kind) for s in layout_fields(LLDF_HEADER)}
    assert every["LENGTH"] == (0, 2, "bin") and every["SYSTEMID"] == (2, 4, "char")
    assert every["DBNAME"] == (16, 8, "char") and every["TABLENAME"] == (40, 18, "char")
    assert every["TIMESTAMP"] == (60, 17, "ts17")
    assert every["LOGLRSN"] == (77, 10, "lrsn") and every["LOGRBA"] == (87, 10, "rba")
    assert [spec for spec in every.values() if spec[2] == "reserved"] == [(188, 4, "reserved")]
    assert max(offset + width for offset, width, _ in every.values()) == 288
    assert len(field_specs(LLDF_HEADER)) == len(every) - 1
    reserved = Struct("a" / fields.Char(2), "r" / fields.Reserved(3), "b" / fields.Bin(4))
    assert [(s.name, s.offset, s.kind) for s in field_specs(reserved)] == [
        ("a", 0, "char"),
        ("b", 5, "bin"),
    ]


def test_binary_buffers_of_sliced_null_and_large_binary_arrays():
    array = pa.array([b"ab", None, b"", b"cdef", b"g"], pa.binary()).slice(1, 4)
    raw, starts, lengths = binary_buffers(array)
    assert lengths.tolist() == [0, 0, 4, 1]
    assert bytes(raw[starts[2] : starts[2] + 4]) == b"cdef"
    large = pa.array([b"xy", b"z"], pa.large_binary())
    raw, starts, lengths = binary_buffers(large)
    assert (starts.tolist(), lengths.tolist(), bytes(raw)) == ([0, 2], [2, 1], b"xyz")
    empty = binary_buffers(pa.array([], pa.binary()))
    assert [len(part) for part in empty] == [0, 0, 0]


def test_uints_read_either_byte_order_and_clamp_past_the_end():
    buffer = np.frombuffer(bytes.fromhex("01020304050607080900"), np.uint8)
    at = np.array([0, 2, 9])
    assert uints(buffer, at, 2, "big").tolist() == [0x0102, 0x0304, 0x0000]
    assert uints(buffer, at, 2, "little").tolist() == [0x0201, 0x0403, 0x0000]
    assert uints(buffer, np.array([1]), 4, "little").tolist() == [0x05040302]
    assert uints(buffer, np.array([0]), 8, "big").tolist() == [0x0102030405060708]
    assert uints(np.zeros(0, np.uint8), at, 4, "big").tolist() == [0, 0, 0]


def test_integer_fields_of_a_byte_matrix_by_their_field_table():
    """solidDB's 11-byte DATE value: year u16 at 0, month, day, hour, minute, second one byte
    each at 2-6, fraction u32 at 7, all MSB first."""
    from udfs.batch import field_ints, matrix_ints
    from udfs.soliddb.layouts import DATE_VALUE

    table = {spec.name: spec for spec in layout_fields(DATE_VALUE)}
    assert [(s.name, s.offset, s.width) for s in table.values()] == [
        ("year", 0, 2), ("month", 2, 1), ("day", 3, 1), ("hour", 4, 1), ("minute", 5, 1),
        ("second", 6, 1), ("fraction", 7, 4),
    ]  # fmt: skip
    matrix = np.frombuffer(bytes.fromhex("07e8021d173b3b3b9ac9ff"), np.uint8).reshape(1, 11)
    got = {name: int(field_ints(matrix, spec)[0]) for name, spec in table.items()}
    assert got == {"year": 2024, "month": 2, "day": 29, "hour": 23, "minute": 59, "second": 59,
                   "fraction": 999_999_999}  # fmt: skip
    signed = np.frombuffer(bytes.fromhex("fffe"), np.uint8).reshape(1, 2)
    assert matrix_ints(signed, 0, 2, "little", signed=True).tolist() == [-257]
    assert matrix_ints(signed, 0, 2, "big").tolist() == [0xFFFE]
