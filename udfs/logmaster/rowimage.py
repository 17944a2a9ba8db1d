"""Log Master row images (the DATA field of an LLDF record), decoded a batch at a time.

DATA (README interpretation 3): ``u16 total length including itself``, then one row image (two
for UB: before, then after), each ``u16 length`` + image bytes. A row image holds the columns
in LLCOLUMNNUM order (interpretation 4):

* nullable column (LLNULLS Y or L): one null byte first, x'00' value present, x'FF' NULL;
* varying column (VCHR, VGRF, LVCH, LVGR, ROWI, and inline LOBs BLOB/CLOB/DBCL): ``u16`` length
  then the data; for VGRF/LVGR/DBCL the length counts double-byte characters, as Db2 does;
* fixed column: LLCOLUMNLEN bytes; a NULL fixed column keeps its full width.

LLCOLUMNPOS is a cross-check only: a mismatch becomes a warning, not a rejected record.

The decoder is vectorised across the rows of a batch that share a layout: it walks the
columns once, keeping a numpy vector of positions (one per row), so the Python cost is per
column, not per value. Values are rendered as the marts show them (``udfs.values``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa

from udfs import values
from udfs.batch import HEX_PAIRS, ascii_table

VARYING_TYPES = frozenset({"VCHR", "VGRF", "LVCH", "LVGR", "ROWI", "BLOB", "CLOB", "DBCL"})
DOUBLE_BYTE_TYPES = frozenset({"GRPH", "VGRF", "LVGR", "DBCL"})
TEXT_TYPES = frozenset({"CHAR", "VCHR", "LVCH", "CLOB"})
LOB_TYPES = frozenset({"BLOB", "CLOB", "DBCL"})
# Change types whose DATA holds row images, and which image is which.
IMAGES_BY_CHANGE_TYPE = {
    "UB": ("before", "after"),
    "I": ("after",),
    "IL": ("after",),
    "D": ("before",),
}


@dataclass(frozen=True)
class Column:
    """One DLCI row: what the row image holds for a column."""

    num: int
    type: str
    length: int
    scale: int
    nulls: str
    subtype: str
    pos: int | None = None

    @property
    def nullable(self) -> bool:
        return self.nulls in ("Y", "L")

    @property
    def varying(self) -> bool:
        return self.type in VARYING_TYPES


@dataclass(frozen=True)
class RowLayout:
    """A table's row image layout plus how to read its characters and floats."""

    columns: tuple[Column, ...]
    encoding: str = "E"  # DTBI ENCODINGSCHEME: E, A or U
    ebcdic_codec: str = values.DEFAULT_EBCDIC
    ascii_codec: str = values.DEFAULT_ASCII
    float_format: str = "hfp"  # or "ieee"
    lobs_included: bool = True

    @property
    def text_codec(self) -> str:
        return {"E": self.ebcdic_codec, "A": self.ascii_codec}.get(self.encoding, "utf-8")

    @property
    def graphic_codec(self) -> str | None:
        # Db2 for z/OS graphic data is UTF-16 in Unicode tables; EBCDIC/ASCII DBCS code pages
        # have no Python codec, so such values are shown as hex with a warning.
        return "utf-16-be" if self.encoding == "U" else None


@lru_cache(maxsize=256)
def parse_layout(text: str) -> RowLayout:
    """Read the layout JSON that ``int_logmaster_table_layouts`` builds (cached per string)."""
    spec = json.loads(text)
    columns = tuple(
        Column(
            num=int(c["num"]),
            type=(c["type"] or "").strip(),
            length=int(c["len"] or 0),
            scale=int(c.get("scale") or 0),
            nulls=(c.get("nulls") or "N").strip(),
            subtype=(c.get("subtype") or "").strip(),
            pos=c.get("pos"),
        )
        for c in sorted(spec["columns"], key=lambda c: int(c["num"]))
    )
    ebcdic = spec.get("ebcdic_codepage") or values.ebcdic_codec(spec.get("ebcdic_ccsid"))
    return RowLayout(
        columns=columns,
        encoding=(spec.get("encoding") or "E").strip() or "E",
        ebcdic_codec=values.check_codec(ebcdic),
        ascii_codec=values.check_codec(spec.get("ascii_codepage") or values.DEFAULT_ASCII),
        float_format=(spec.get("float_format") or "hfp").lower(),
        lobs_included=(spec.get("lobs_included") or "Y") != "N",
    )


def layout_from_control(dtbi: dict, dlci: list[dict], ebcdic_ccsid: int | None = None) -> RowLayout:
    """A table's layout from its decoded DTBI and DLCI records (as udfs.logmaster.control
    returns them); the SQL model ``int_logmaster_table_layouts`` builds the same from staging."""
    columns = tuple(
        Column(
            num=d["llcolumnnum"],
            type=d["llcolumntype"],
            length=d["llcolumnlen"] or 0,
            scale=d["llscale"] or 0,
            nulls=d["llnulls"] or "N",
            subtype=d["llcolumnsubtype"] or "",
            pos=d["llcolumnpos"],
        )
        for d in sorted(dlci, key=lambda d: d["llcolumnnum"])
    )
    return RowLayout(
        columns=columns,
        encoding=dtbi.get("encodingscheme") or "E",
        ebcdic_codec=values.ebcdic_codec(ebcdic_ccsid),
        lobs_included=(dtbi.get("lobsincluded") or "Y") != "N",
    )


def layout_json(layout: RowLayout) -> str:
    """The JSON form of a layout (tests and the benchmark build layouts this way)."""
    return json.dumps(
        {
            "encoding": layout.encoding,
            "ebcdic_codepage": layout.ebcdic_codec,
            "ascii_codepage": layout.ascii_codec,
            "float_format": layout.float_format,
            "lobs_included": "Y" if layout.lobs_included else "N",
            "columns": [
                {
                    "num": c.num,
                    "type": c.type,
                    "len": c.length,
                    "scale": c.scale,
                    "nulls": c.nulls,
                    "subtype": c.subtype,
                    "pos": c.pos,
                }
                for c in layout.columns
            ],
        },
        sort_keys=True,
    )


# --- a batch of images ---------------------------------------------------------------------


class _Images:
    """Row images of one batch inside one byte buffer: starts/ends per row, errors per row."""

    def __init__(self, buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray):
        self.buffer = buffer
        self.pos = starts.astype(np.int64).copy()
        self.ends = ends.astype(np.int64)
        self.errors: list[str | None] = [None] * len(starts)
        self.bad = np.zeros(len(starts), bool)

    def fail(self, rows: np.ndarray, reason: str) -> None:
        for row in np.flatnonzero(rows & ~self.bad):
            self.errors[row] = reason
        self.bad |= rows

    def take(self, width: np.ndarray | int, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Claim ``width`` bytes at each row's position; returns (starts, widths)."""
        width = np.where(self.bad, 0, np.broadcast_to(np.asarray(width, np.int64), self.pos.shape))
        starts = self.pos.copy()
        over = starts + width > self.ends
        if over.any():
            self.fail(over, f"row image ends inside {what}")
        self.pos = np.minimum(starts + width, self.ends)
        return starts, np.where(over | self.bad, 0, width)

    def bytes_at(self, starts: np.ndarray, width: int) -> np.ndarray:
        """(rows, width) matrix at the given starts, reading zeros past a row's end."""
        index = starts[:, None] + np.arange(width, dtype=np.int64)
        index = np.minimum(index, len(self.buffer) - 1)
        return self.buffer[index] if width else np.zeros((len(starts), 0), np.uint8)

    def u16(self, what: str) -> np.ndarray:
        starts, widths = self.take(2, what)
        matrix = self.bytes_at(starts, 2).astype(np.int64)
        return np.where(widths == 2, matrix[:, 0] << 8 | matrix[:, 1], 0)


def _ragged(
    buffer: np.ndarray, starts: np.ndarray, widths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate buffer[start:start+width] for every row; returns (data, int32 offsets)."""
    offsets = np.zeros(len(starts) + 1, np.int64)
    np.cumsum(widths, out=offsets[1:])
    total = int(offsets[-1])
    if total == 0:
        return np.zeros(0, np.uint8), offsets.astype(np.int32)
    index = np.repeat(starts - offsets[:-1], widths) + np.arange(total, dtype=np.int64)
    return buffer[index], offsets.astype(np.int32)


def _binary_array(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    return pa.BinaryArray.from_buffers(
        pa.binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _string_array(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    return pa.StringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))
    )


def _hex_values(data: np.ndarray, offsets: np.ndarray) -> list[str | None]:
    return _string_array(HEX_PAIRS[data].reshape(-1), offsets * 2).to_pylist()


_ASCII_TABLES: dict[str, np.ndarray] = {}


def _text_values(data: np.ndarray, offsets: np.ndarray, codec: str) -> list[str]:
    """Decode ragged text: a table lookup when every byte is ASCII in ``codec``, else Python."""
    if codec not in ("utf-8", "utf8"):
        table = _ASCII_TABLES.setdefault(codec, ascii_table(codec))
        translated = table[data]
        if not (translated == 0xFF).any():
            return _string_array(translated, offsets).to_pylist()
    raw = _binary_array(data, offsets).to_pylist()
    return [value.decode(codec) for value in raw]


def _ints(matrix: np.ndarray) -> np.ndarray:
    """Big-endian two's complement integers from a (rows, width) byte matrix."""
    width = matrix.shape[1]
    value = np.zeros(len(matrix), np.int64)
    for column in range(width):
        value = (value << 8) | matrix[:, column].astype(np.int64)
    if width < 8:
        sign = np.int64(1) << (8 * width - 1)
        value = (value ^ sign) - sign
    return value


def _packed(matrix: np.ndarray, scale: int) -> tuple[list[str | None], np.ndarray]:
    """Packed decimals -> text with scale; returns values and a mask of invalid rows."""
    nibbles = np.stack([matrix >> 4, matrix & 15], 2).reshape(len(matrix), -1)
    digits, signs = nibbles[:, :-1], nibbles[:, -1]
    bad = (digits > 9).any(axis=1) | ~np.isin(signs, [0xA, 0xB, 0xC, 0xD, 0xE, 0xF])
    negative = np.isin(signs, [0xB, 0xD])
    if digits.shape[1] <= 18:
        unscaled = np.zeros(len(matrix), np.int64)
        for column in range(digits.shape[1]):
            unscaled = unscaled * 10 + digits[:, column]
        unscaled = np.where(negative, -unscaled, unscaled)
        texts = [values.scaled_text(int(u), scale) for u in unscaled.tolist()]
    else:
        texts = [
            None if b else values.scaled_text((-1 if n else 1) * int("".join(map(str, d))), scale)
            for b, n, d in zip(bad, negative, digits.tolist(), strict=True)
        ]
    return texts, bad


def _floats(matrix: np.ndarray, float_format: str) -> list[str]:
    width = matrix.shape[1]
    if float_format == "ieee":
        floats = np.ascontiguousarray(matrix).view(">f4" if width == 4 else ">f8").ravel()
        return [values.render_float(float(f), width == 4) for f in floats.tolist()]
    word = np.zeros(len(matrix), np.uint64)
    for column in range(width):
        word = (word << np.uint64(8)) | matrix[:, column].astype(np.uint64)
    bits = width * 8
    negative = (word >> np.uint64(bits - 1)).astype(bool)
    exponent = ((word >> np.uint64(bits - 8)) & np.uint64(0x7F)).astype(np.int64) - 64
    fraction = (word & np.uint64((1 << (bits - 8)) - 1)).astype(np.float64)
    magnitude = np.ldexp(fraction, (4 * exponent - (bits - 8)).astype(np.int32))
    result = np.where(negative, -magnitude, magnitude)
    return [values.render_float(float(f), width == 4) for f in result.tolist()]


# Character forms of temporal values -> the marts' text.
_TEMPORAL = {
    "DATE": values.date_text,
    "TIME": values.time_text,
    "DTTM": values.timestamp_text,
    "DTTZ": values.timestamp_text,
}


class _Result:
    """Rendered values of one image position: column-major lists plus warnings."""

    def __init__(self, rows: int, columns: int):
        self.values: list[list[str | None]] = [[None] * rows for _ in range(columns)]
        self.warnings: list[set[str]] = [set() for _ in range(rows)]


def _decode_column(
    images: _Images, col: Column, index: int, layout: RowLayout, result: _Result, image_starts
) -> None:
    what = f"column {col.num} ({col.type})"
    rows = len(images.pos)
    present = np.ones(rows, bool)
    if col.pos is not None and col.pos >= 0:
        # LLCOLUMNPOS counts from the start of the row image: a cross-check only.
        moved = (images.pos - image_starts != col.pos) & ~images.bad
        for row in np.flatnonzero(moved):
            result.warnings[row].add(f"column {col.num} is not at LLCOLUMNPOS {col.pos}")
    if col.nullable:
        starts, widths = images.take(1, f"the null byte of {what}")
        indicator = images.bytes_at(starts, 1)[:, 0]
        odd = (indicator != 0x00) & (indicator != 0xFF) & (widths == 1)
        if odd.any():
            images.fail(odd, f"null byte of {what} is neither x'00' nor x'FF'")
        present = indicator == 0x00
    if col.varying:
        length = images.u16(f"the length of {what}")
        width = length * 2 if col.type in DOUBLE_BYTE_TYPES else length
    else:
        width = np.full(rows, col.length, np.int64)
    starts, widths = images.take(width, what)
    present &= ~images.bad
    if col.type in LOB_TYPES and not layout.lobs_included:
        for row in np.flatnonzero(present):
            result.warnings[row].add(f"column {col.num}: LOB not included in the logical log")
        return
    chosen = np.flatnonzero(present)
    if not len(chosen):
        return
    rendered, bad = _render(images.buffer, starts[chosen], widths[chosen], col, layout)
    if bad is not None and bad.any():
        mask = np.zeros(rows, bool)
        mask[chosen[bad]] = True
        images.fail(mask, f"{what} holds bytes that are not a valid {col.type} value")
    target = result.values[index]
    for row, value in zip(chosen.tolist(), rendered, strict=True):
        target[row] = value
    if col.type in DOUBLE_BYTE_TYPES and layout.graphic_codec is None:
        for row in chosen.tolist():
            result.warnings[row].add(f"column {col.num}: DBCS graphic data shown as hex")


def _render(
    buffer: np.ndarray, starts: np.ndarray, widths: np.ndarray, col: Column, layout: RowLayout
) -> tuple[list[str | None], np.ndarray | None]:
    """Render the present values of one column; returns texts and a bad-value mask."""
    kind = col.type
    if kind == "INT" and col.length in (2, 4, 8):
        matrix = buffer[starts[:, None] + np.arange(col.length)]
        return [str(v) for v in _ints(matrix).tolist()], None
    if kind == "DEC":
        return _packed(buffer[starts[:, None] + np.arange(col.length)], col.scale)
    if kind == "FLOT" and col.length in (4, 8):
        return _floats(buffer[starts[:, None] + np.arange(col.length)], layout.float_format), None
    data, offsets = _ragged(buffer, starts, widths)
    if kind == "ROWI" or kind == "BLOB" or (kind in TEXT_TYPES and col.subtype == "B"):
        return _hex_values(data, offsets), None
    if kind in DOUBLE_BYTE_TYPES:
        if layout.graphic_codec is None:
            return _hex_values(data, offsets), None
        return _decode_each(_binary_array(data, offsets).to_pylist(), layout.graphic_codec)
    if kind in TEXT_TYPES:
        try:
            return _text_values(data, offsets, layout.text_codec), None
        except UnicodeDecodeError:
            return _decode_each(_binary_array(data, offsets).to_pylist(), layout.text_codec)
    if kind in _TEMPORAL:
        texts, bad = _decode_each(_binary_array(data, offsets).to_pylist(), layout.text_codec)
        rendered: list[str | None] = []
        for i, text in enumerate(texts):
            try:
                rendered.append(None if text is None else _TEMPORAL[kind](text))
            except values.DecodeError:
                rendered.append(None)
                bad[i] = True
        return rendered, bad
    raise values.DecodeError(f"column {col.num}: LLCOLUMNTYPE {kind!r} length {col.length} is "
                             "not one logmart can decode")


def _decode_each(raw: list[bytes], codec: str) -> tuple[list[str | None], np.ndarray]:
    texts: list[str | None] = []
    bad = np.zeros(len(raw), bool)
    for i, value in enumerate(raw):
        try:
            texts.append(value.decode(codec))
        except UnicodeDecodeError:
            texts.append(None)
            bad[i] = True
    return texts, bad


# --- DATA field -> images --------------------------------------------------------------------


@dataclass
class DecodedImages:
    """Per row: before/after values (column order), warnings, and an error (None if decoded)."""

    before: list[list[str | None] | None]
    after: list[list[str | None] | None]
    warnings: list[list[str]]
    errors: list[str | None]


def decode_data(
    data: list[bytes | None], change_types: list[str | None], layout: RowLayout
) -> DecodedImages:
    """Decode the DATA fields of rows that share one layout.

    Rows whose change type carries no row image (DM, DT, DR, CO, …) get no images and no error.
    """
    rows = len(data)
    out = DecodedImages([None] * rows, [None] * rows, [[] for _ in range(rows)], [None] * rows)
    names = [IMAGES_BY_CHANGE_TYPE.get((ct or "").strip(), ()) for ct in change_types]
    lengths = np.array([len(d) if d is not None else 0 for d in data], np.int64)
    buffer = np.frombuffer(b"".join(d or b"" for d in data) + b"\x00\x00", np.uint8)
    record_starts = np.zeros(rows, np.int64)
    np.cumsum(lengths[:-1], out=record_starts[1:])
    frame = _Images(buffer, record_starts, record_starts + lengths)
    frame.bad = np.array([not n for n in names], bool)  # nothing to decode in those rows
    skipped = frame.bad.copy()
    total = frame.u16("the DATA length")
    frame.fail((total != lengths) & ~frame.bad, "the DATA length field does not match DATA")
    for slot in range(2):
        wanted = np.array([len(n) > slot for n in names], bool) & ~frame.bad
        if not wanted.any():
            continue
        saved_bad = frame.bad.copy()
        frame.bad |= ~wanted
        length = frame.u16(f"the length of row image {slot + 1}")
        starts, widths = frame.take(length, f"row image {slot + 1}")
        frame.bad = saved_bad | (frame.bad & wanted)
        _decode_images(buffer, starts, widths, wanted & ~frame.bad, slot, names, layout, frame, out)
    frame.fail((frame.pos != frame.ends) & ~frame.bad, "DATA holds more bytes than its row images")
    for row in np.flatnonzero(frame.bad & ~skipped):
        out.errors[row] = frame.errors[row]
        out.before[row] = out.after[row] = None
        out.warnings[row] = []
    return out


def _decode_images(buffer, starts, widths, wanted, slot, names, layout, frame, out) -> None:
    """Decode image ``slot`` of the wanted rows; failures go to ``frame`` with their reason."""
    images = _Images(buffer, starts, starts + widths)
    images.bad = ~wanted
    result = _Result(len(starts), len(layout.columns))
    for index, col in enumerate(layout.columns):
        _decode_column(images, col, index, layout, result, starts)
    images.fail(
        (images.pos != images.ends) & ~images.bad,
        "row image is longer than the columns of its table layout",
    )
    for row in np.flatnonzero(wanted):
        if images.bad[row]:
            frame.fail(_one(len(starts), row), f"row image {slot + 1}: {images.errors[row]}")
            continue
        values_in_order = [result.values[c][row] for c in range(len(layout.columns))]
        getattr(out, names[row][slot])[row] = values_in_order
        out.warnings[row].extend(sorted(result.warnings[row]))


def _one(rows: int, row: int) -> np.ndarray:
    mask = np.zeros(rows, bool)
    mask[row] = True
    return mask


# --- Arrow UDF body ----------------------------------------------------------------------------

ROW_IMAGES_TYPE = (
    "struct<before_values: array<string>, after_values: array<string>, "
    "warnings: array<string>, error: string>"
)
_VALUES = pa.list_(pa.string())


def row_images_arrow(data: pa.Array, change_type: pa.Array, layout: pa.Array) -> pa.Array:
    """Spark Arrow UDF body: decode a batch whose rows may belong to several layouts.

    A row without a layout (no DLCI for its table) gets an error saying so.
    """
    rows = len(data)
    data_py, types_py, layouts_py = data.to_pylist(), change_type.to_pylist(), layout.to_pylist()
    before: list = [None] * rows
    after: list = [None] * rows
    warnings: list = [[] for _ in range(rows)]
    errors: list = [None] * rows
    groups: dict[str, list[int]] = {}
    for row, text in enumerate(layouts_py):
        if text is None:
            if IMAGES_BY_CHANGE_TYPE.get((types_py[row] or "").strip()):
                errors[row] = "no table layout (DTBI/DLCI) for this table in the control file"
            continue
        groups.setdefault(text, []).append(row)
    for text, members in groups.items():
        try:
            parsed = parse_layout(text)
        except (ValueError, KeyError, values.DecodeError) as exc:
            for row in members:
                errors[row] = f"table layout unusable: {exc}"
            continue
        try:
            decoded = decode_data(
                [data_py[r] for r in members], [types_py[r] for r in members], parsed
            )
        except values.DecodeError as exc:
            for row in members:
                errors[row] = str(exc)
            continue
        for i, row in enumerate(members):
            before[row], after[row] = decoded.before[i], decoded.after[i]
            warnings[row], errors[row] = decoded.warnings[i], decoded.errors[i]
    return pa.StructArray.from_arrays(
        [
            pa.array(before, _VALUES),
            pa.array(after, _VALUES),
            pa.array(warnings, _VALUES),
            pa.array(errors, pa.string()),
        ],
        names=["before_values", "after_values", "warnings", "error"],
    )
