"""Fast batch decoders derived from construct layouts: the one batch mechanism of every source.

A construct ``Struct`` is turned into a field table (:func:`layout_fields`: name, offset,
width, kind, ``struct`` code): fields of :mod:`udfs.fields` types (Log Master), construct's
integer fields and fixed ``Bytes`` (Db2 LUW), nested Structs flattened. Batch decoders read a
field of every record of a batch at once from those offsets with numpy (:func:`gather`,
:func:`uints`, over the bytes of an Arrow binary column: :func:`binary_buffers`), and
:func:`decode_fields` hands Arrow arrays to Spark: per-record ``Struct.parse`` is about 10
times slower than Spark allows (``../shared/notes/STACK.md``). Values inside the records
(packed decimals, floats, dates, text) are rendered by :mod:`udfs.batch_values`. The
construct layout stays the single description; tests check both paths agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from construct import Bytes, Construct, FormatField, Renamed, SizeofError, Struct

from udfs import values
from udfs.fields import _Field

# Spark SQL type of each field kind (what the raw tables hold; staging types further).
SPARK_TYPES = {
    "bin": "bigint",
    "char": "string",
    "charnum": "int",
    "hex": "string",
    "rba": "string",
    "lrsn": "string",
    "ts17": "string",
}
ARROW_TYPES = {
    "bin": pa.int64(),
    "char": pa.string(),
    "charnum": pa.int32(),
    "hex": pa.string(),
    "rba": pa.string(),
    "lrsn": pa.string(),
    "ts17": pa.string(),
}


@dataclass(frozen=True)
class FieldSpec:
    """One field of a fixed layout: where it is and how to decode it.

    ``kind`` is a :mod:`udfs.fields` kind, ``uint`` / ``int`` / ``float`` (a construct
    ``FormatField``, in ``byteorder``) or ``bytes``; ``code`` is its ``struct`` format code."""

    name: str
    offset: int
    width: int
    kind: str
    code: str = ""
    byteorder: str = "big"

    @property
    def end(self) -> int:
        return self.offset + self.width

    @property
    def column(self) -> str:
        """The column name in tables: the spec name lower-cased."""
        return self.name.lower()


def _size_or_none(layout: Construct) -> int | None:
    try:
        return layout.sizeof()
    except SizeofError:
        return None


def _leaf(name: str, field: Construct, offset: int) -> FieldSpec | None:
    """The field table entry of one leaf field; None when it has no fixed width."""
    if isinstance(field, _Field):
        return FieldSpec(name, offset, field.width, field.kind, f"{field.width}s")
    if isinstance(field, FormatField):
        order, code = field.fmtstr[0], field.fmtstr[1:]
        kind = "uint" if code in "BHILQ" else "int" if code in "bhilq" else "float"
        byteorder = "little" if order == "<" else "big"
        return FieldSpec(name, offset, field.length, kind, code, byteorder)
    if isinstance(field, Bytes) and isinstance(field.length, int):
        return FieldSpec(name, offset, field.length, "bytes", f"{field.length}s")
    return None


def _walk(layout: Struct, offset: int, leading: bool) -> tuple[list[FieldSpec], bool]:
    """(field table from ``offset``, whether the whole Struct was fixed-size)."""
    specs: list[FieldSpec] = []
    for sub in layout.subcons:
        field = sub.subcon if isinstance(sub, Renamed) else sub
        if isinstance(field, Struct):
            nested, whole = _walk(field, offset, leading)
            specs.extend(nested)
            offset = specs[-1].end if specs else offset
            if not whole:
                return specs, False  # the nested Struct ends in a variable part: stop here too
            continue
        spec = _leaf(sub.name, field, offset)
        if spec is None:
            if leading:
                return specs, False
            raise TypeError(f"{sub.name}: only fixed-size fields can be batch-decoded")
        specs.append(spec)
        offset = spec.end
    return specs, True


def layout_fields(layout: Struct, leading: bool = False) -> list[FieldSpec]:
    """The field table of a construct Struct, every field (reserved ones too), in order.

    ``leading``: the fixed-size fields before the first variable-size one (a record's fixed
    header); otherwise every field must be fixed-size. Nested Structs are flattened (their
    fields keep their own names)."""
    specs, whole = _walk(layout, 0, leading)
    if whole and specs and specs[-1].end != _size_or_none(layout):
        raise TypeError(f"the field table of {layout} does not add up to its size")
    return specs


def field_specs(layout: Struct) -> list[FieldSpec]:
    """The documented fields of a fixed-size Struct of udfs.fields types (reserved left out)."""
    return [spec for spec in layout_fields(layout) if spec.kind != "reserved"]


def struct_format(specs: list[FieldSpec], byteorder: str) -> str:
    """The ``struct`` format of a field table (``struct.Struct(...)`` reads it in one call)."""
    return (">" if byteorder == "big" else "<") + "".join(spec.code for spec in specs)


# --- byte access over a batch --------------------------------------------------------------


def binary_buffers(data: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bytes, int64 start of each value, int64 length of each value; 0 for nulls) of an Arrow
    binary or large binary array, without copying the bytes."""
    if pa.types.is_large_binary(data.type):
        offset_type = np.int64
    else:
        data = data.cast(pa.binary())
        offset_type = np.int32
    buffers = data.buffers()
    if len(data) == 0 or buffers[1] is None:
        return np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)
    offsets = np.frombuffer(buffers[1], offset_type)[data.offset : data.offset + len(data) + 1]
    offsets = offsets.astype(np.int64)
    raw = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    if data.null_count:
        lengths = np.where(data.is_null().to_numpy(zero_copy_only=False), 0, lengths)
    return raw, offsets[:-1], lengths


_SPANS = {width: np.arange(width, dtype=np.int64) for width in (1, 2, 4, 8)}


def uints(buffer: np.ndarray, at: np.ndarray, width: int, byteorder: str) -> np.ndarray:
    """The ``width``-byte (1, 2, 4 or 8) unsigned integers at positions ``at`` of ``buffer``, as
    uint64; positions past the end read the buffer's last byte (callers mask such rows out)."""
    if len(buffer) == 0:
        return np.zeros(len(at), np.uint64)
    index = np.minimum(np.asarray(at, np.int64)[:, None] + _SPANS[width], len(buffer) - 1)
    matrix = np.ascontiguousarray(buffer[index])
    if width == 1:
        return matrix[:, 0].astype(np.uint64)
    dtype = ("<u" if byteorder == "little" else ">u") + str(width)
    return matrix.view(dtype)[:, 0].astype(np.uint64)


def matrix_ints(
    matrix: np.ndarray, offset: int, width: int, byteorder: str, signed: bool = False
) -> np.ndarray:
    """The ``width``-byte (1, 2, 4 or 8) integer at ``offset`` of every row of a byte matrix
    (uint64, or int64 when ``signed``)."""
    columns = np.ascontiguousarray(matrix[:, offset : offset + width])
    dtype = ("<" if byteorder == "little" else ">") + ("i" if signed else "u") + str(width)
    return columns.view(dtype)[:, 0].astype(np.int64 if signed else np.uint64)


def field_ints(matrix: np.ndarray, spec: FieldSpec) -> np.ndarray:
    """Integer field ``spec`` (of :func:`layout_fields`) of every row of a byte matrix."""
    return matrix_ints(matrix, spec.offset, spec.width, spec.byteorder, spec.kind == "int")


# --- lookup tables -------------------------------------------------------------------------

_HEX_DIGITS = np.frombuffer(b"0123456789ABCDEF", np.uint8)
# byte -> its two upper-case hex digits
HEX_PAIRS = np.stack([_HEX_DIGITS[np.arange(256) >> 4], _HEX_DIGITS[np.arange(256) & 15]], 1)
# byte -> both hex digits as one native uint16 whose memory holds them in reading order
HEX_WORDS = np.ascontiguousarray(HEX_PAIRS).view(np.uint16).ravel()
_NOT_ASCII = 0xFF


def ascii_table(codec: str) -> np.ndarray:
    """byte -> ASCII byte of its character in ``codec``, or 0xFF where it is not ASCII."""
    table = np.full(256, _NOT_ASCII, np.uint8)
    for byte in range(256):
        try:
            char = bytes([byte]).decode(codec)
        except UnicodeError:
            continue
        if len(char) == 1 and ord(char) < 0x80:
            table[byte] = ord(char)
    return table


_ASCII_TABLES: dict[str, np.ndarray] = {}


def _table_for(codec: str) -> np.ndarray:
    if codec not in _ASCII_TABLES:
        _ASCII_TABLES[codec] = ascii_table(codec)
    return _ASCII_TABLES[codec]


# --- decoding ------------------------------------------------------------------------------


def gather(buffer: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """(n, width) matrix of the ``width`` bytes at each start; reads past the end repeat the
    buffer's last byte (callers flag such rows as too short)."""
    if len(buffer) < width:
        buffer = np.concatenate([buffer, np.zeros(width - len(buffer), np.uint8)])
    # Rows of a strided window view: copies n*width bytes without an n*width index array.
    windows = np.lib.stride_tricks.sliding_window_view(buffer, width)
    return windows[np.minimum(starts, len(windows) - 1)]


def _strings(matrix: np.ndarray) -> pa.Array:
    """Fixed-width rows of ASCII bytes -> Arrow strings, zero-copy."""
    n, width = matrix.shape
    data = np.ascontiguousarray(matrix)
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def _bin(matrix: np.ndarray) -> np.ndarray:
    value = np.zeros(len(matrix), np.int64)
    for column in range(matrix.shape[1]):
        value = (value << 8) | matrix[:, column]
    return value


def _char_fields(headers: np.ndarray, specs: list[FieldSpec], codec: str) -> dict[str, pa.Array]:
    """Every CHAR field at once: one table lookup over all their bytes, one non-ASCII check."""
    if not specs:
        return {}
    at = np.concatenate([np.arange(spec.offset, spec.end) for spec in specs])
    raw = headers[:, at]
    translated = _table_for(codec)[raw]
    not_ascii = translated == _NOT_ASCII
    odd_rows = np.flatnonzero(not_ascii.any(axis=1))
    if len(odd_rows):
        translated[not_ascii] = ord("?")  # keeps the buffer valid UTF-8; those rows are redone
    columns = {}
    start = 0
    for spec in specs:
        end = start + spec.width
        strings = _strings(translated[:, start:end])
        if len(odd_rows):
            # Rare: non-ASCII text in a header field; decode those rows one by one.
            patched = strings.to_pylist()
            for row in odd_rows:
                patched[row] = raw[row, start:end].tobytes().decode(codec, errors="replace")
            strings = pa.array(patched, pa.string())
        columns[spec.column] = pc.utf8_rtrim(strings, characters=" \x00")
        start = end
    return columns


def _hex(matrix: np.ndarray, kind: str) -> pa.Array:
    if matrix.shape[1] == 6 and kind in ("rba", "lrsn"):
        # 6-byte forms sit at offset 4 (RBA) or offset 1 (LRSN) of the 10-byte form.
        padded = np.zeros((len(matrix), 10), np.uint8)
        at = 4 if kind == "rba" else 1
        padded[:, at : at + 6] = matrix
        matrix = padded
    # One uint16 lookup per byte (both digits at once) is ~4x faster than gathering pairs.
    return _strings(HEX_WORDS[matrix].view(np.uint8))


# 'YYYY-MM-DD HH:MM:SS.' + fraction: each D takes the next BIN(17) digit, in order.
_DAYS_IN_MONTH = np.array([0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_TS_PATTERN = "DDDD-DD-DD DD:DD:DD." + "D" * values.BIN17_FRACTION_DIGITS


def _ts17(matrix: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """BIN(17) timestamps -> text; returns the array and a mask of rows that are not digits."""
    nibbles = np.stack([matrix >> 4, matrix & 15], 2).reshape(len(matrix), 34)
    empty = ~matrix.any(axis=1)
    out = np.empty((len(matrix), len(_TS_PATTERN)), np.uint8)
    digit = 0
    for position, char in enumerate(_TS_PATTERN):
        if char == "D":
            out[:, position] = nibbles[:, digit] + ord("0")
            digit += 1
        else:
            out[:, position] = ord(char)
    # The same checks as values.bin17_timestamp: days of the month (leap years), times up to
    # 23:59:59 and Db2's 24:00:00.
    number = nibbles.astype(np.int64)
    years = number[:, 0] * 1000 + number[:, 1] * 100 + number[:, 2] * 10 + number[:, 3]
    months, days = number[:, 4] * 10 + number[:, 5], number[:, 6] * 10 + number[:, 7]
    hours, minutes = number[:, 8] * 10 + number[:, 9], number[:, 10] * 10 + number[:, 11]
    seconds = number[:, 12] * 10 + number[:, 13]
    leap = (years % 4 == 0) & ((years % 100 != 0) | (years % 400 == 0))
    month_days = _DAYS_IN_MONTH[np.clip(months, 0, 12)] - ((months == 2) & ~leap)
    bad = (nibbles > 9).any(axis=1)
    bad |= (months < 1) | (months > 12) | (days < 1) | (days > month_days)
    bad |= ~(((hours < 24) & (minutes < 60) & (seconds < 60))
             | ((hours == 24) & (minutes == 0) & (seconds == 0)))  # fmt: skip
    bad &= ~empty
    strings = pc.if_else(pa.array(empty | bad), pa.scalar(None, pa.string()), _strings(out))
    return strings, bad


def decode_fields(
    headers: np.ndarray, specs: list[FieldSpec], codec: str = values.DEFAULT_EBCDIC
) -> tuple[dict[str, pa.Array], list[tuple[np.ndarray, str]]]:
    """Decode every field of an (n, header width) byte matrix.

    Returns Arrow arrays by column name and a list of (bad-row mask, reason) for rows whose
    field bytes are impossible (the caller turns them into quarantine reasons).
    """
    columns = _char_fields(headers, [spec for spec in specs if spec.kind == "char"], codec)
    problems: list[tuple[np.ndarray, str]] = []
    for spec in specs:
        matrix = headers[:, spec.offset : spec.end]
        if spec.kind == "bin":
            columns[spec.column] = pa.array(_bin(matrix), pa.int64())
        elif spec.kind == "char":
            continue
        elif spec.kind in ("hex", "rba", "lrsn"):
            columns[spec.column] = _hex(matrix, spec.kind)
        elif spec.kind == "ts17":
            columns[spec.column], bad = _ts17(matrix)
            if bad.any():
                problems.append((bad, f"{spec.name} is not a valid BIN(17) timestamp"))
        else:
            raise ValueError(f"{spec.name}: kind {spec.kind!r} has no batch decoder")
    return {spec.column: columns[spec.column] for spec in specs}, problems
