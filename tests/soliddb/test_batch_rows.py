"""The batch row decoder gives exactly what the scalar reference gives, row by row."""

from __future__ import annotations

import struct
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logmart_generators.soliddb import generate
from udfs.errors import DecodeError
from udfs.soliddb.batch_rows import decode_rows
from udfs.soliddb.catalog import Column, read_catalog
from udfs.soliddb.layouts import ROW_RECIDS, TYPE_ENCODINGS
from udfs.soliddb.readers import find_exports, read_sys_log
from udfs.soliddb.records import decode_capture, decode_row_data

from .handmade import field

CODECS = ("utf-8", "utf-16-be")


def scalar(data: bytes, columns) -> tuple[list, list, str | None]:
    try:
        row, reasons = decode_row_data(data, columns, char_codec=CODECS[0], wchar_codec=CODECS[1])
    except DecodeError as exc:
        return [None] * len(columns), [None] * len(columns), exc.reason
    return [row[c.name] for c in columns], [reasons.get(c.name) for c in columns], None


def batch(datas: list[bytes], columns) -> list[tuple[list, list, str | None]]:
    decoded = decode_rows(pa.array(datas, pa.binary()), columns, *CODECS)
    values = [column.to_pylist() for column in decoded.values]
    reasons = [column.to_pylist() for column in decoded.null_reasons]
    out = []
    for row, error in enumerate(decoded.errors):
        if error is not None:
            out.append(([None] * len(columns), [None] * len(columns), error))
        else:
            out.append(([v[row] for v in values], [r[row] for r in reasons], None))
    return out


def assert_same(datas: list[bytes], columns) -> None:
    assert batch(datas, columns) == [scalar(d, columns) for d in datas]


# One column of every type, nullable, then NOT NULL ones.
EVERY_TYPE = tuple(
    Column(f"C{i}", t, position=i, scale=2 if t in ("NUMERIC", "DECIMAL") else None)
    for i, t in enumerate(sorted(TYPE_ENCODINGS), start=1)
)
NOT_NULL = (
    Column("K", "INTEGER", nullable=False, position=1),
    Column("S", "VARCHAR", nullable=False, position=2),
    Column("B", "VARBINARY", nullable=False, position=3),
    Column("T", "TIMESTAMP", nullable=False, position=4),
)


def ts(year, month, day, hour=0, minute=0, second=0, nanos=0) -> bytes:
    return struct.pack(">HBBBBBI", year, month, day, hour, minute, second, nanos)


def test_every_row_of_a_generated_capture(tmp_path: Path):
    generate(tmp_path, 60, 11)
    capture = tmp_path / "soliddb" / "capture01"
    (export,) = find_exports(capture)
    rows = list(read_sys_log(export))
    _, history = decode_capture(rows, read_catalog(capture / "catalog"))
    by_layout: dict = {}
    for row in rows:
        if row["recid"] in ROW_RECIDS:
            layout = history.layout_at(row["relid"], row["logaddr"])
            by_layout.setdefault(layout.columns, []).append(row["data"])
    assert len(by_layout) >= 6
    for columns, datas in by_layout.items():
        assert_same(datas, columns)


def test_unusual_rows_go_the_scalar_way_with_the_same_answer():
    columns = (
        Column("I", "INTEGER", position=1),
        Column("D", "DATE", position=2),
        Column("T", "TIME", position=3),
        Column("N", "NUMERIC", position=4, scale=2),
        Column("R", "REAL", position=5),
        Column("F", "DOUBLE PRECISION", position=6),
        Column("X", "DECIMAL", position=7),
    )
    i1 = field(struct.pack(">i", -5))
    datas = [
        i1 + field(ts(2024, 2, 29)) + field(ts(0, 0, 0, 24, 0, 0)) + field(b"1.5E+3"),
        i1 + field(ts(2023, 2, 29)),  # not a date
        i1 + field(ts(10000, 1, 1)),  # year out of range
        i1 + field(ts(2024, 1, 1, nanos=10**9)),  # fraction out of range
        i1 + field(b"") + field(b"") + field(b"-0") + field(struct.pack(">d", 0.1)),
        i1 + field(b"") + field(b"") + field(b"007") + field(struct.pack(">d", float("nan"))),
        i1 + field(b"") + field(b"") + field(b"1.239"),  # more digits than the scale
        i1 + field(b"") + field(b"") + field(b"-0.5") + field(b"") + field(struct.pack(">d", -0.0)),
        field(b"\x00\x01"),  # an INTEGER of 2 bytes
        i1 + b"\xff",  # reserved lead byte
        i1 + b"\xfe\x01\x00",  # long length cut short
        i1 + b"\x09abc",  # field runs past DATA
        i1 * 8,  # more fields than columns
        i1 + field(b"") + field(b"") + field(b"12") + field(b"") + field(b"") + field(b"\xc3"),
        b"",
    ]
    assert_same(datas, columns)


def test_not_null_columns():
    datas = [
        field(struct.pack(">i", 1)) + field(b"") + field(b"") + field(ts(2024, 1, 2, 3, 4, 5, 6)),
        field(b"") + field(b"x"),  # an empty INTEGER in a NOT NULL column
        field(struct.pack(">i", 2)),  # trailing columns not in the record
    ]
    assert_same(datas, NOT_NULL)
    assert batch(datas[:1], NOT_NULL)[0][0] == ["1", "", "", "2024-01-02 03:04:05.000000006"]


def test_long_fields_and_wide_text():
    columns = (Column("W", "WVARCHAR", position=1), Column("L", "LONG VARCHAR", position=2))
    datas = [
        field("Zoë 北京".encode("utf-16-be")) + field(("é" * 300).encode()),
        field(b"\xd8\x00") + field(b"ok"),  # a lone surrogate is not UTF-16
    ]
    assert_same(datas, columns)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=60), min_size=1, max_size=20))
def test_random_bytes_decode_as_the_reference_does(datas: list[bytes]):
    assert_same(datas, EVERY_TYPE)
    assert_same(datas, NOT_NULL)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(st.binary(max_size=12), st.sampled_from([b"", b"1.5", b"-3"])), max_size=26
        ),
        min_size=1,
        max_size=10,
    )
)
def test_random_framed_fields_decode_as_the_reference_does(rows: list[list[bytes]]):
    datas = [b"".join(field(value) for value in values) for values in rows]
    assert_same(datas, EVERY_TYPE)


def test_an_empty_batch():
    assert batch([], EVERY_TYPE) == []


@pytest.mark.parametrize("columns", [(), NOT_NULL[:1]])
def test_no_or_one_column(columns):
    assert_same([b"", field(b"\x00\x00\x00\x01")], columns)
