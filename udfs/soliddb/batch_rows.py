"""Row records decoded a whole batch at a time: numpy over the DATA bytes, Arrow out.

The same values, NULL reasons and errors as :func:`udfs.soliddb.records.decode_row_data`
(the single definition; this is its fast form), for rows that share one table layout:

1. **Framing** (interpretation 10, :mod:`udfs.soliddb.data_format`): the fields of every row are
   found column by column with numpy — a lead byte ``< 0xFE`` is the length, ``0xFE`` a 4-byte
   little-endian length follows.
2. **Values**: each column's field bytes are rendered with the vectorised decoders of
   :mod:`udfs.batch_values` (text, hex, big-endian integers, IEEE doubles) or here (the 11-byte
   date/time), DFLOAT text value by value with a fast path.
3. **Anything unusual** — a reserved lead byte, a field running past DATA, more fields than
   columns, a zero-length field in a NOT NULL column, a value whose width or bytes do not fit its
   type, a date/time out of range — sends the *row* to the scalar decoder, which gives the exact
   value or the exact error a person reads. The fast path only ever renders rows it is sure of.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs import batch_values
from udfs.batch import binary_buffers, field_ints, layout_fields, uints
from udfs.errors import DecodeError
from udfs.soliddb.catalog import Column
from udfs.soliddb.data_format import LONG_LENGTH_MARK, LONG_LENGTH_SIZE, RESERVED_LEAD
from udfs.soliddb.layouts import DATE_VALUE, FIXED_WIDTHS, Encoding
from udfs.soliddb.records import NULL_LOGGED, NULL_NOT_IN_RECORD, decode_row_data

_HAS_EMPTY_VALUE = frozenset((Encoding.CHAR, Encoding.UNICODE, Encoding.BINARY))
_DAYS_IN_MONTH = np.array([0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


@dataclass
class DecodedRows:
    """Per column: value texts and NULL reasons (Arrow strings); per row: the error or None."""

    values: list[pa.Array]
    null_reasons: list[pa.Array]
    errors: list[str | None]


@dataclass
class _Fields:
    """Where each column's field is in the batch buffer, per row."""

    starts: np.ndarray  # (columns, rows) int64
    lengths: np.ndarray  # (columns, rows) int64
    present: np.ndarray  # (columns, rows) bool: the row has a field for the column
    slow: np.ndarray  # (rows,) bool: the row goes to the scalar decoder


def decode_rows(
    data: pa.Array, columns: Sequence[Column], char_codec: str, wchar_codec: str
) -> DecodedRows:
    """Decode non-null DATA values of one layout; see the module docstring."""
    data = data.cast(pa.binary())
    buffer, begin, lengths = binary_buffers(data)
    end = begin + lengths
    fields = _frame(buffer, begin, end, len(columns))
    values, reasons = [], []
    for index, column in enumerate(columns):
        texts, reason, slow = _column(buffer, fields, index, column, (char_codec, wchar_codec))
        fields.slow |= slow
        values.append(texts)
        reasons.append(reason)
    errors: list[str | None] = [None] * len(data)
    slow_rows = np.flatnonzero(fields.slow)
    if len(slow_rows):
        _scalar_rows(data, slow_rows, columns, (char_codec, wchar_codec), values, reasons, errors)
    return DecodedRows(values, reasons, errors)


# --- framing --------------------------------------------------------------------------------------


def _frame(buffer: np.ndarray, begin: np.ndarray, end: np.ndarray, count: int) -> _Fields:
    rows = len(begin)
    starts = np.zeros((count, rows), np.int64)
    lengths = np.zeros((count, rows), np.int64)
    present = np.zeros((count, rows), bool)
    slow = np.zeros(rows, bool)
    position = begin.copy()
    last = max(len(buffer) - 1, 0)
    for index in range(count):
        here = (position < end) & ~slow
        lead = buffer[np.minimum(position, last)].astype(np.int64) if len(buffer) else position * 0
        long_form = here & (lead == LONG_LENGTH_MARK)
        start = position + 1 + LONG_LENGTH_SIZE * long_form
        length = np.where(
            long_form,
            uints(buffer, position + 1, LONG_LENGTH_SIZE, "little").astype(np.int64),
            lead,
        )
        broken = here & ((lead == RESERVED_LEAD) | (start + length > end))
        slow |= broken
        here &= ~broken
        starts[index], lengths[index], present[index] = start, length, here
        position = np.where(here, start + length, position)
    slow |= position < end  # more fields than columns
    return _Fields(starts, lengths, present, slow)


# --- one column -----------------------------------------------------------------------------------


def _column(
    buffer: np.ndarray, fields: _Fields, index: int, column: Column, codecs: tuple[str, str]
) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """(texts, NULL reasons, rows to send to the scalar decoder) of one column."""
    present, length = fields.present[index], fields.lengths[index]
    empty = present & (length == 0)
    encoding = column.encoding
    slow = np.zeros(len(present), bool)
    if empty.any() and not column.nullable and encoding not in _HAS_EMPTY_VALUE:
        slow |= empty  # a NOT NULL column that cannot be empty: the scalar decoder says why
    is_null = ~present | (empty & column.nullable)
    valued = ~is_null & ~slow & ~fields.slow
    texts = pa.nulls(len(present), pa.string())
    if valued.any():
        if encoding is None:
            slow |= valued
        else:
            rows = np.flatnonzero(valued)
            rendered, bad = _render(
                buffer, fields.starts[index][rows], length[rows], column, codecs
            )
            slow[rows[bad]] = True
            texts = _scatter(rows[~bad], rendered.filter(pa.array(~bad)), len(present))
    reasons = np.full(len(present), None, object)
    reasons[is_null & present] = NULL_LOGGED
    reasons[~present] = NULL_NOT_IN_RECORD
    return texts, pa.array(reasons, pa.string()), slow


def _scatter(rows: np.ndarray, values: pa.Array, size: int) -> pa.Array:
    """An array of ``size`` nulls with ``values`` placed at ``rows``."""
    mask = np.zeros(size, bool)
    mask[rows] = True
    return pc.replace_with_mask(pa.nulls(size, pa.string()), pa.array(mask), values)


def _render(
    buffer: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    column: Column,
    codecs: tuple[str, str],
) -> tuple[pa.Array, np.ndarray]:
    """Texts of non-empty values of one column, and which rows the fast path could not take."""
    encoding = column.encoding
    width = FIXED_WIDTHS.get(encoding)  # type: ignore[arg-type]
    if width is not None:
        wrong = lengths != width
        matrix = batch_values.fixed(buffer, starts, width)
        texts, bad = _FIXED[encoding](matrix, column)
        return texts, bad | wrong
    data, offsets = batch_values.ragged(buffer, starts, lengths)
    if encoding is Encoding.BINARY:
        return batch_values.hex_strings(data, offsets), np.zeros(len(starts), bool)
    if encoding in (Encoding.CHAR, Encoding.UNICODE):
        codec = codecs[0] if encoding is Encoding.CHAR else codecs[1]
        return batch_values.text_strings(data, offsets, codec)
    return _dfloats(batch_values.binary_array(data, offsets), column.scale)


def _integers(matrix: np.ndarray, column: Column) -> tuple[pa.Array, np.ndarray]:
    return batch_values.int_strings(matrix)


def _doubles(matrix: np.ndarray, column: Column) -> tuple[pa.Array, np.ndarray]:
    floats = batch_values.ieee_floats(matrix)
    texts, bad = batch_values.float_strings(floats, single=column.sql_type == "REAL")
    return texts, bad | ~np.isfinite(floats)


# DATE_VALUE's fields, at the offsets its construct Struct gives
_DATE_FIELDS = {spec.name: spec for spec in layout_fields(DATE_VALUE)}


def _dates(matrix: np.ndarray, column: Column) -> tuple[pa.Array, np.ndarray]:
    """11-byte DATE / TIME / TIMESTAMP; anything out of the ordinary goes to the scalar path."""
    m = {name: field_ints(matrix, spec).astype(np.int64) for name, spec in _DATE_FIELDS.items()}
    year, month, day = m["year"], m["month"], m["day"]
    hour, minute, second, nanos = m["hour"], m["minute"], m["second"], m["fraction"]
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_days = _DAYS_IN_MONTH[np.clip(month, 0, 12)] - ((month == 2) & ~leap)
    date_ok = (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days)
    time_ok = (hour < 24) & (minute < 60) & (second < 60)
    ok = (year <= 9999) & (nanos < 10**9)
    kind = column.sql_type
    pieces: list[np.ndarray | bytes] = []
    if kind in ("DATE", "TIMESTAMP"):
        ok &= date_ok
        pieces += [_digits(year, 4), b"-", _digits(month, 2), b"-", _digits(day, 2)]
    if kind == "TIMESTAMP":
        pieces.append(b" ")
    if kind in ("TIME", "TIMESTAMP"):
        ok &= time_ok
        pieces += [_digits(hour, 2), b":", _digits(minute, 2), b":", _digits(second, 2)]
    if kind == "TIMESTAMP":
        pieces += [b".", _digits(nanos, 9)]
    if not pieces:  # not a date/time type: the scalar decoder says so
        return pa.nulls(len(matrix), pa.string()), np.ones(len(matrix), bool)
    rows = len(matrix)
    matrix_text = np.hstack(
        [
            p if isinstance(p, np.ndarray) else np.tile(np.frombuffer(p, np.uint8), (rows, 1))
            for p in pieces
        ]
    )
    width = matrix_text.shape[1]
    offsets = np.arange(0, (rows + 1) * width, width, dtype=np.int32)
    return batch_values.string_array(matrix_text.reshape(-1), offsets), ~ok


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """(rows, width) ASCII digits of non-negative integers (the low ``width`` digits)."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return (48 + (values[:, None] // powers) % 10).astype(np.uint8)


_FIXED = {
    Encoding.INTEGER: _integers,
    Encoding.BIGINT: _integers,
    Encoding.DOUBLE_FLOAT: _doubles,
    Encoding.DATE: _dates,
}

_PLAIN_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*)?")


def _dfloats(raw: pa.Array, scale: int | None) -> tuple[pa.Array, np.ndarray]:
    """DFLOAT text: plain decimals with at most ``scale`` fraction digits here, others slow."""
    texts: list[str | None] = []
    bad = np.zeros(len(raw), bool)
    for row, value in enumerate(raw.to_pylist()):
        text = _plain_decimal(value, scale)
        texts.append(text)
        bad[row] = text is None
    return pa.array(texts, pa.string()), bad


def _plain_decimal(raw: bytes, scale: int | None) -> str | None:
    """``'52750.5'`` with scale 2 -> ``'52750.50'``; None for anything less plain."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    if scale is None or not _PLAIN_DECIMAL.fullmatch(text):
        return None
    whole, _, fraction = text.partition(".")
    negative_zero = whole == "-0" and not fraction.strip("0")
    if len(fraction) > scale or negative_zero:
        return None  # too many digits, or a negative zero: the scalar decoder decides
    return whole + ("." + fraction.ljust(scale, "0") if scale else "")


# --- the scalar path for unusual rows -------------------------------------------------------------


def _scalar_rows(
    data: pa.Array,
    rows: np.ndarray,
    columns: Sequence[Column],
    codecs: tuple[str, str],
    values: list[pa.Array],
    reasons: list[pa.Array],
    errors: list[str | None],
) -> None:
    """Decode ``rows`` with the reference decoder; put their values and errors in place."""
    decoded_values: list[list[str | None]] = [[] for _ in columns]
    decoded_reasons: list[list[str | None]] = [[] for _ in columns]
    for row in rows:
        try:
            row_values, row_reasons = decode_row_data(
                data[int(row)].as_py(), columns, char_codec=codecs[0], wchar_codec=codecs[1]
            )
        except DecodeError as exc:
            errors[int(row)] = exc.reason
            row_values, row_reasons = {}, {}
        for index, column in enumerate(columns):
            decoded_values[index].append(row_values.get(column.name))
            decoded_reasons[index].append(row_reasons.get(column.name))
    mask = np.zeros(len(data), bool)
    mask[rows] = True
    arrow_mask = pa.array(mask)
    for index in range(len(columns)):
        values[index] = pc.replace_with_mask(
            values[index], arrow_mask, pa.array(decoded_values[index], pa.string())
        )
        reasons[index] = pc.replace_with_mask(
            reasons[index], arrow_mask, pa.array(decoded_reasons[index], pa.string())
        )
