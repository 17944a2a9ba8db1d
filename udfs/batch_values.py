"""Vectorised forms of the shared value decoders: a whole column of a batch at once -> Arrow.

Each function takes the bytes of one column for many rows (a fixed-width ``(rows, width)``
matrix, or ragged ``data`` + ``offsets``) and returns an Arrow string array rendered exactly as
the scalar decoders of :mod:`udfs.values` render one value, plus a mask of rows whose bytes are
not a valid value. Rows the fast path cannot take (an unusual but legal form) fall back to the
scalar decoder, so both stay the single definition of a value's text.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs import values
from udfs.batch import HEX_PAIRS, ascii_table
from udfs.errors import DecodeError

_NOT_ASCII = 0xFF


# --- building Arrow arrays from numpy ---------------------------------------------------------


def ragged(
    buffer: np.ndarray, starts: np.ndarray, widths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``buffer[start:start+width]`` of every row -> (bytes, int32 offsets)."""
    offsets = np.zeros(len(starts) + 1, np.int64)
    np.cumsum(widths, out=offsets[1:])
    total = int(offsets[-1])
    if total == 0:
        return np.zeros(0, np.uint8), offsets.astype(np.int32)
    index = np.repeat(starts - offsets[:-1], widths) + np.arange(total, dtype=np.int64)
    return buffer[index], offsets.astype(np.int32)


def fixed(buffer: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """``(rows, width)`` matrix of the bytes at each start; reads past the buffer give its last
    byte (callers only use rows whose bytes are there)."""
    if width == 0 or len(starts) == 0 or len(buffer) == 0:
        return np.zeros((len(starts), width), np.uint8)
    index = starts[:, None] + np.arange(width, dtype=np.int64)
    return buffer[np.minimum(index, len(buffer) - 1)]


def binary_array(
    data: np.ndarray, offsets: np.ndarray, valid: np.ndarray | None = None
) -> pa.Array:
    """Arrow binary values over ``data`` cut at int32 ``offsets`` (null where not ``valid``)."""
    bitmap = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(
        pa.binary(), len(offsets) - 1, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def slices(
    buffer: np.ndarray, starts: np.ndarray, widths: np.ndarray, valid: np.ndarray | None = None
) -> pa.Array:
    """``buffer[start:start+width]`` of every row as Arrow binary values, copied (null where
    not ``valid``)."""
    if valid is not None:
        widths = np.where(valid, widths, 0)
    data, offsets = ragged(buffer, starts, widths)
    return binary_array(data, offsets, valid)


def string_array(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    """Arrow strings over UTF-8 bytes (validated by the caller or by construction)."""
    return pa.Array.from_buffers(
        pa.string(),
        len(offsets) - 1,
        [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))],
    )


def _matrix_strings(matrix: np.ndarray) -> pa.Array:
    rows, width = matrix.shape
    return string_array(matrix.reshape(-1), np.arange(rows + 1, dtype=np.int32) * width)


def _no_problems(rows: int) -> np.ndarray:
    return np.zeros(rows, bool)


# --- binary, text --------------------------------------------------------------------------------


def hex_strings(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    """Binary values as upper-case hex."""
    return string_array(HEX_PAIRS[data].reshape(-1), offsets * 2)


_ASCII_TABLES: dict[str, np.ndarray] = {}


def text_strings(data: np.ndarray, offsets: np.ndarray, codec: str) -> tuple[pa.Array, np.ndarray]:
    """Character data in ``codec`` -> text; rows whose bytes are not valid are flagged.

    ASCII-only columns of single-byte code pages go through a lookup table; UTF-8 is
    validated by Arrow; anything else is decoded value by value.
    """
    rows = len(offsets) - 1
    if codec.replace("-", "").lower() == "utf8":
        raw = binary_array(data, offsets)
        try:
            return raw.cast(pa.string()), _no_problems(rows)
        except pa.ArrowInvalid:
            return _decode_each(raw, codec)
    table = _ASCII_TABLES.get(codec)
    if table is None:
        table = _ASCII_TABLES[codec] = ascii_table(codec)
    translated = table[data]
    if not (translated == _NOT_ASCII).any():
        return string_array(translated, offsets), _no_problems(rows)
    return _decode_each(binary_array(data, offsets), codec)


def dbcs_strings(data: np.ndarray, offsets: np.ndarray, mixed_codec: str):
    """Pure double-byte EBCDIC (GRAPHIC) through a mixed code page, value by value
    (:func:`udfs.values.dbcs_text`); rows that are not valid are flagged."""
    raw = binary_array(data, offsets)
    texts: list[str | None] = []
    bad = np.zeros(len(raw), bool)
    for row, value in enumerate(raw.to_pylist()):
        try:
            texts.append(values.dbcs_text(value, mixed_codec))
        except DecodeError:
            texts.append(None)
            bad[row] = True
    return pa.array(texts, pa.string()), bad


def _decode_each(raw: pa.Array, codec: str) -> tuple[pa.Array, np.ndarray]:
    texts: list[str | None] = []
    bad = np.zeros(len(raw), bool)
    for row, value in enumerate(raw.to_pylist()):
        try:
            texts.append(value.decode(codec))
        except UnicodeError:
            texts.append(None)
            bad[row] = True
    return pa.array(texts, pa.string()), bad


# --- numbers --------------------------------------------------------------------------------------


def be_ints(matrix: np.ndarray) -> np.ndarray:
    """Big-endian two's complement integers (1-8 bytes) of each row."""
    width = matrix.shape[1]
    value = np.zeros(len(matrix), np.uint64)
    for column in range(width):
        value = (value << np.uint64(8)) | matrix[:, column].astype(np.uint64)
    if width < 8:
        sign = np.uint64(1 << (8 * width - 1))
        return ((value ^ sign).astype(np.int64)) - np.int64(int(sign))
    return value.view(np.int64)


def int_strings(matrix: np.ndarray, byteorder: str = "big") -> tuple[pa.Array, np.ndarray]:
    """Two's complement integers in ``byteorder`` -> decimal text (``str(int)``)."""
    if byteorder == "little":
        matrix = matrix[:, ::-1]
    return pa.array(be_ints(matrix)).cast(pa.string()), _no_problems(len(matrix))


def boolean_strings(matrix: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """One byte 00/01 -> 'false' / 'true' (Db2 LUW BOOLEAN); any other byte is flagged."""
    byte = matrix[:, 0]
    texts = pc.if_else(pa.array(byte == 1), pa.scalar("true"), pa.scalar("false"))
    return texts, byte > 1


_POSITIVE = np.array([0xA, 0xC, 0xE, 0xF])
_NEGATIVE = np.array([0xB, 0xD])


def packed_decimals(matrix: np.ndarray, scale: int) -> tuple[pa.Array, np.ndarray]:
    """Packed decimals -> plain decimal text with ``scale`` digits after the point."""
    nibbles = np.stack([matrix >> 4, matrix & 15], 2).reshape(len(matrix), -1)
    digits, signs = nibbles[:, :-1], nibbles[:, -1]
    negative = np.isin(signs, _NEGATIVE)
    bad = (digits > 9).any(axis=1) | ~(negative | np.isin(signs, _POSITIVE))
    if digits.shape[1] > 18 or scale < 0 or scale > 38:
        return _scalar_column(matrix, lambda raw: values.packed_decimal(raw, scale))
    unscaled = np.zeros(len(matrix), np.int64)
    for column in range(digits.shape[1]):
        unscaled = unscaled * 10 + digits[:, column]
    unscaled = np.where(negative, -unscaled, unscaled)
    words = np.stack([unscaled, np.where(unscaled < 0, -1, 0)], 1).astype(np.int64)
    decimals = pa.Array.from_buffers(
        pa.decimal128(38, scale), len(matrix), [None, pa.py_buffer(words.tobytes())]
    )
    texts = decimals.cast(pa.string())
    # Arrow writes a decimal whose adjusted exponent is below -6 in scientific notation
    # ('0E-7', '1.23E-7'): those rows (|unscaled| < 10**(scale-6)) take the scalar text.
    if scale > 6:
        small = np.abs(unscaled) < 10 ** (scale - 6) if scale - 6 < 19 else np.ones(len(bad), bool)
        if small.any():
            plain = [values.scaled_text(int(u), scale) for u in unscaled[small]]
            texts = pc.replace_with_mask(texts, pa.array(small), pa.array(plain, pa.string()))
    return texts, bad


def hfp_floats(matrix: np.ndarray) -> np.ndarray:
    """IBM hexadecimal floating point (4 or 8 bytes) -> float64, exactly."""
    width = matrix.shape[1]
    word = np.zeros(len(matrix), np.uint64)
    for column in range(width):
        word = (word << np.uint64(8)) | matrix[:, column].astype(np.uint64)
    bits = width * 8
    negative = (word >> np.uint64(bits - 1)).astype(bool)
    exponent = ((word >> np.uint64(bits - 8)) & np.uint64(0x7F)).astype(np.int64) - 64
    fraction = (word & np.uint64((1 << (bits - 8)) - 1)).astype(np.float64)
    magnitude = np.ldexp(fraction, (4 * exponent - (bits - 8)).astype(np.int32))
    return np.where(negative, -magnitude, magnitude)


def ieee_floats(matrix: np.ndarray, byteorder: str = "big") -> np.ndarray:
    kind = (">" if byteorder == "big" else "<") + ("f4" if matrix.shape[1] == 4 else "f8")
    # a signalling NaN raises the "invalid" flag when widened; it stays a NaN, as
    # values.ieee_float gives it (tests/fuzz/test_batch_values.py), so numpy need not warn
    with np.errstate(invalid="ignore"):
        return np.ascontiguousarray(matrix).view(kind).ravel().astype(np.float64)


def float_strings(floats: np.ndarray, single: bool) -> tuple[pa.Array, np.ndarray]:
    """Shortest round-trip text, as :func:`udfs.values.render_float` (numpy prints the same)."""
    # repr of Python floats is ~4x faster than numpy's astype(str), and is the scalar form.
    texts = list(map(repr, floats.tolist()))
    if single:
        with np.errstate(over="ignore", invalid="ignore"):
            as32 = floats.astype(np.float32)
        normal = (floats == 0) | (np.abs(floats) >= values.FLOAT32_TINY)  # as render_float
        exact = np.flatnonzero(np.isfinite(as32) & normal & (as32.astype(np.float64) == floats))
        for row, text in zip(exact.tolist(), as32[exact].astype(str).tolist(), strict=True):
            texts[row] = text
    return pa.array(texts, pa.string()), _no_problems(len(floats))


# --- character dates and times --------------------------------------------------------------------

# Canonical forms: D = digit; other characters must be one of the alternatives given, or be
# themselves ('.' before a fraction is only '.'; ';' stands for the zone's ':', only ':'), as
# the scalar decoders' regular expressions accept them.
_SEPARATORS = {"-": b"-", ":": b".:", ";": b":", "+": b"+-"}
_DAYS = np.array([0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def _canonical(ascii_rows: np.ndarray, pattern: str) -> np.ndarray:
    """Rows of ``ascii_rows`` that match ``pattern`` position by position."""
    ok = np.ones(len(ascii_rows), bool)
    for position, char in enumerate(pattern):
        column = ascii_rows[:, position]
        if char == "D":
            ok &= (column >= 0x30) & (column <= 0x39)
        else:
            ok &= np.isin(column, np.frombuffer(_SEPARATORS.get(char, char.encode()), np.uint8))
    return ok


def _number(ascii_rows: np.ndarray, start: int, width: int) -> np.ndarray:
    value = np.zeros(len(ascii_rows), np.int64)
    for column in range(start, start + width):
        value = value * 10 + (ascii_rows[:, column].astype(np.int64) - 0x30)
    return value


def _valid_date(rows: np.ndarray, at: int = 0) -> np.ndarray:
    year, month, day = _number(rows, at, 4), _number(rows, at + 5, 2), _number(rows, at + 8, 2)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    days = _DAYS[np.clip(month, 0, 12)] - ((month == 2) & ~leap)
    return (month >= 1) & (month <= 12) & (day >= 1) & (day <= days)


def _valid_time(rows: np.ndarray, at: int) -> np.ndarray:
    hour, minute, second = _number(rows, at, 2), _number(rows, at + 3, 2), _number(rows, at + 6, 2)
    normal = (hour < 24) & (minute < 60) & (second < 60)
    return normal | ((hour == 24) & (minute == 0) & (second == 0))


# column type -> (pattern of the external form, where the output's bytes come from (None: in
# place), output separators by position). Formats whose values are not fixed character forms
# (USA times, SASTIME numbers) have none: the scalar decoder reads them.
_DATE_ORDER = {
    "EUR": ("DD.DD.DDDD", [6, 7, 8, 9, 2, 3, 4, 2, 0, 1]),  # DD.MM.YYYY -> YYYY-MM-DD
    "USA": ("DD/DD/DDDD", [6, 7, 8, 9, 2, 0, 1, 2, 3, 4]),  # MM/DD/YYYY -> YYYY-MM-DD
}


def _temporal_form(
    kind: str, width: int, fmt: str = values.DEFAULT_DATE_FORMAT
) -> tuple[str, list[int] | None, dict[int, str]] | None:
    if fmt == "SASTIME" or fmt not in values.DATE_FORMATS:
        return None
    if kind == "DATE" and width == 10:
        if fmt in _DATE_ORDER:
            pattern, order = _DATE_ORDER[fmt]
            return pattern, order, {4: "-", 7: "-"}
        return "DDDD-DD-DD", None, {}
    if kind == "TIME" and width == 8 and fmt != "USA":
        return "DD:DD:DD", None, {2: ":", 5: ":"}
    if kind in ("DTTM", "DTTZ"):
        base = "DDDD-DD-DD-DD:DD:DD"
        zone = "+DD;DD" if kind == "DTTZ" else ""
        fraction = width - len(base) - len(zone) - 1
        if not 1 <= fraction <= 12:  # values.timestamp_text reads up to 12 fraction digits
            return None
        return base + "." + "D" * fraction + zone, None, {10: " ", 13: ":", 16: ":"}
    return None


# Db2 LUW packs DATE / TIME / TIMESTAMP as unsigned packed digits (no sign nibble): D takes
# the next digit, as udfs.values.packed_date / packed_time / packed_timestamp render them.
_PACKED_FORMS = {"DATE": ("DDDD-DD-DD", 4), "TIME": ("DD:DD:DD", 3)}


def _packed_form(kind: str, width: int) -> str | None:
    if kind in _PACKED_FORMS:
        pattern, size = _PACKED_FORMS[kind]
        return pattern if width == size else None
    if kind == "TIMESTAMP" and 7 <= width <= 13:
        fraction = 2 * (width - 7)
        return "DDDD-DD-DD DD:DD:DD" + ("." + "D" * fraction if fraction else "")
    return None


def packed_temporal_strings(matrix: np.ndarray, kind: str) -> tuple[pa.Array, np.ndarray] | None:
    """Packed-digit DATE / TIME / TIMESTAMP columns (Db2 LUW) -> the marts' text; rows with a
    non-decimal digit or an impossible date or time are flagged. None for a width the scalar
    decoder refuses (it says why)."""
    pattern = _packed_form(kind, matrix.shape[1])
    if pattern is None:
        return None
    nibbles = np.stack([matrix >> 4, matrix & 15], 2).reshape(len(matrix), -1)
    out = np.empty((len(matrix), len(pattern)), np.uint8)
    digit = 0
    for position, char in enumerate(pattern):
        if char == "D":
            out[:, position] = nibbles[:, digit] + ord("0")
            digit += 1
        else:
            out[:, position] = ord(char)
    bad = (nibbles > 9).any(axis=1)
    if kind != "TIME":
        bad |= ~_valid_date(out)
    if kind != "DATE":
        bad |= ~_valid_time(out, 0 if kind == "TIME" else 11)
    return _matrix_strings(np.where(bad[:, None], ord("0"), out).astype(np.uint8)), bad


_SCALAR_TEMPORAL = {
    "DATE": values.date_text,
    "TIME": values.time_text,
    "DTTM": values.timestamp_text,
    "DTTZ": values.timestamp_text,
}


def temporal_strings(
    matrix: np.ndarray, kind: str, codec: str, fmt: str = values.DEFAULT_DATE_FORMAT
) -> tuple[pa.Array, np.ndarray]:
    """Character DATE/TIME/DTTM/DTTZ columns written in date format ``fmt`` (DLDS
    DATEFORMAT, :func:`udfs.values.date_format`) -> the marts' text.

    Rows in the format's fixed form are rendered by moving bytes; others go through the scalar
    decoder, which accepts the other separators, reads USA times and SAS numbers, and says what
    is wrong.
    """
    table = _ASCII_TABLES.get(codec)
    if table is None:
        table = _ASCII_TABLES[codec] = ascii_table(codec)
    rows = table[matrix]
    form = _temporal_form(kind, matrix.shape[1], fmt)
    fast = np.zeros(len(rows), bool)
    out = rows.copy()
    if form is not None:
        pattern, order, separators = form
        fast = _canonical(rows, pattern)
        if order is not None:
            out = rows[:, order]
        if kind != "TIME":
            fast &= _valid_date(out)
        time_at = 0 if kind == "TIME" else 11
        if kind != "DATE":
            fast &= _valid_time(out, time_at)
        for position, char in separators.items():
            out[:, position] = ord(char)
    strings = _matrix_strings(np.where(fast[:, None], out, ord("?")).astype(np.uint8))
    if fast.all():
        return strings, _no_problems(len(rows))
    scalar = _SCALAR_TEMPORAL[kind]
    slow, bad = _scalar_column(matrix, lambda raw: scalar(values.text(raw, codec), fmt), skip=fast)
    return pc.if_else(pa.array(fast), strings, slow), bad


def _scalar_column(
    matrix: np.ndarray, decode, skip: np.ndarray | None = None
) -> tuple[pa.Array, np.ndarray]:
    """Decode each row (but those in ``skip``) with a scalar decoder; failures are flagged."""
    texts: list[str | None] = []
    bad = np.zeros(len(matrix), bool)
    for row in range(len(matrix)):
        if skip is not None and skip[row]:
            texts.append(None)
            continue
        try:
            texts.append(decode(matrix[row].tobytes()))
        except DecodeError:
            texts.append(None)
            bad[row] = True
    return pa.array(texts, pa.string()), bad
