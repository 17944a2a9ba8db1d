"""Fast batch decoders derived from construct layouts.

A fixed-size construct ``Struct`` built from :mod:`udfs.fields` types is turned into a field
table (name, offset, width, kind). :func:`decode_fields` then decodes the same field of every
record of a batch at once with numpy and hands Arrow arrays to Spark: per-record
``Struct.parse`` is about 10 times slower than Spark allows (``../shared/notes/STACK.md``).
The construct layout stays the single description; tests check both paths agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from construct import Struct

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
    """One field of a fixed layout: where it is and how to decode it."""

    name: str
    offset: int
    width: int
    kind: str

    @property
    def end(self) -> int:
        return self.offset + self.width

    @property
    def column(self) -> str:
        """The column name in tables: the spec name lower-cased."""
        return self.name.lower()


def field_specs(layout: Struct) -> list[FieldSpec]:
    """The field table of a fixed-size Struct of udfs.fields types (reserved fields left out)."""
    specs = []
    offset = 0
    for sub in layout.subcons:
        field = sub.subcon
        if not isinstance(field, _Field):
            raise TypeError(f"{sub.name}: only udfs.fields types can be batch-decoded")
        if field.kind != "reserved":
            specs.append(FieldSpec(sub.name, offset, field.width, field.kind))
        offset += field.width
    return specs


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
