"""Log Master row images (the DATA field of an LLDF record), decoded a batch at a time.

DATA (README interpretation 3): ``u16 total length including itself``, then one row image (two
for UB: before, then after), each ``u16 length`` + image bytes. A row image holds the columns
in LLCOLUMNNUM order (interpretation 4):

* nullable column (LLNULLS Y or L): one null byte first, x'00' value present, x'FF' NULL;
* varying column (VCHR, VGRF, LVCH, LVGR, ROWI, and inline LOBs BLOB/CLOB/DBCL): ``u16`` length
  then the data; for VGRF/LVGR/DBCL the length counts double-byte characters, as Db2 does;
* fixed column: LLCOLUMNLEN bytes; a NULL fixed column keeps its full width.

LLCOLUMNPOS is a cross-check only: a mismatch becomes a warning, not a rejected record. The
spec (``001_…``) gives it as the "offset of the current column within the DATA field", and DATA
(``003_…``) starts with its own u16 total length, then the row image's u16 length: read
literally, a row image's first column is at 4 (:data:`LLCOLUMNPOS_BASE`). Earlier logmart
counted from the image's first byte (0), and "DATA content after its length" would give 2; a
table's first column is always at the image's first byte, so its LLCOLUMNPOS says which base
its extract uses (:func:`position_base`), and every other column is checked against that base.
Each image of a UB counts from its own start, as if it stood alone in DATA (one DLCI value
cannot say two offsets).

DATE/TIME/TIMESTAMP columns are read in the extract's DLDS DATEFORMAT (``udfs.values``).

What the log does not carry is not NULL (``udfs.unavailable``): with DTBI LOBSINCLUDED N, a
BLOB/CLOB/DBCL column whose null byte says a value is present (x'00', or no null byte) has no
value in the logical log; its value is null and ``before_unavailable`` / ``after_unavailable``
(column order, like the values) say ``not_logged_lob``. Its null byte x'FF' is a real NULL,
logged as such; with LOBs included a u16 length 0 is an empty LOB, not a NULL.

XML columns (logmart's reading: ``001_…`` lists no XML LLCOLUMNTYPE, and with XMLINCLUDED N
an XML column need not be in DLCI at all, "one instance ... for every column actually
created"): a DLCI column of LLCOLUMNTYPE ``XML`` is read like an inline LOB (null byte, u16
length, the serialized document as text). With DTBI XMLINCLUDED N its present value is not in
the log: null, ``not_logged_xml``. An XML column left out of DLCI is not in the image, so
nothing presents it as NULL.

A row image that ends at a column boundary before its table version's last columns is a row
written before ALTER TABLE ADD COLUMN (``003_…`` does not describe it; Db2 for z/OS does not
rewrite rows when a column is added): the missing columns are null, ``added_after_row`` (their
value is the column's default, which the log does not hold). At least the first column must be
there; an image ending inside a column stays an error ("row image ends inside ...").

The decoder is vectorised across the rows of a batch that share a layout: it walks the
columns once, keeping a numpy vector of positions (one per row), so the Python cost is per
column, not per value. Values are rendered as the marts show them (``udfs.values``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs import batch_values as bv
from udfs import unavailable, values
from udfs.batch import binary_buffers, uints

VARYING_TYPES = frozenset({"VCHR", "VGRF", "LVCH", "LVGR", "ROWI", "BLOB", "CLOB", "DBCL", "XML"})
DOUBLE_BYTE_TYPES = frozenset({"GRPH", "VGRF", "LVGR", "DBCL"})
TEXT_TYPES = frozenset({"CHAR", "VCHR", "LVCH", "CLOB", "XML"})
LOB_TYPES = frozenset({"BLOB", "CLOB", "DBCL"})
# Change types whose DATA holds row images, and which image is which.
IMAGES_BY_CHANGE_TYPE = {
    "UB": ("before", "after"),
    "I": ("after",),
    "IL": ("after",),
    "D": ("before",),
}
# A mass delete (DM) from LOAD REPLACE of one partition carries the partition's limit keys in
# DATA (``003_…``: "data segments will exist defining the limit key values"); a DM whose DATA
# is empty or only its u16 length (x'0002') empties the whole table. See :func:`limit_keys`.
LIMIT_KEY_CHANGE_TYPES = ("DM",)


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
    keyseq: int = 0  # DLCI KEYSEQ: place in the table's key (0 = not a key column)

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
    xml_included: bool = True  # DTBI XMLINCLUDED (absent, a 704-byte DTBI: taken as Y)
    mixed_codec: str | None = None  # XTYP EBCDIC mixed CCSID's codec (values.ebcdic_mixed_codec)
    date_format: str = values.DEFAULT_DATE_FORMAT  # DLDS DATEFORMAT (values.date_format)

    @property
    def text_codec(self) -> str:
        return {"E": self.ebcdic_codec, "A": self.ascii_codec}.get(self.encoding, "utf-8")

    def column_text_codec(self, col: Column) -> str:
        """Subtype M (mixed SBCS/DBCS, shift-out x'0E' / shift-in x'0F') of an EBCDIC table
        decodes with the extract's mixed code page when it has one (930, 939, 1390 …)."""
        if col.subtype == "M" and self.encoding == "E" and self.mixed_codec:
            return self.mixed_codec
        return self.text_codec

    @property
    def graphic_codec(self) -> str | None:
        # Db2 for z/OS graphic data is UTF-16 in Unicode tables; in EBCDIC tables it is the DBCS
        # half of the mixed code page (decoded as one shift-out run of it); ASCII DBCS and
        # EBCDIC without a mixed code page have no codec: hex with a warning.
        if self.encoding == "U":
            return "utf-16-be"
        return self.mixed_codec if self.encoding == "E" else None


# The layout text int_logmaster_table_layouts builds, one per table version, passed with every
# row to the UDF (so it is compact, not JSON: about 15 bytes a column):
#   <encoding>|<EBCDIC code page, or ccsid:<n>>|<ASCII code page>|<hfp or ieee>|<lobs>|<columns>
#   [|<EBCDIC mixed code page, or ccsid:<n> (XTYP EBCDICMIXEDCCSID)>[|<DLDS DATEFORMAT>]]
# lobs: DTBI LOBSINCLUDED (Y/N), followed by a second N when XMLINCLUDED is N (only then, so
# the texts of tables whose XML is included, or unknown, stay as they were).
# columns: ';'-separated "num,type,len,scale,nulls,subtype,pos[,keyseq]" (subtype and pos may
# be empty; keyseq, DLCI KEYSEQ, is written only for key columns, so keyless texts stay as they
# were). The key columns in KEYSEQ order read a partition-level DM's limit keys.
# The optional 7th field is written only when the extract has a mixed code page logmart can
# decode, the optional 8th only when its date format is not DB2I (the 7th then may be empty),
# so every other layout text (and its digest) is as before.
LAYOUT_FIELDS = 6
OPTIONAL_LAYOUT_FIELDS = 2
# LLCOLUMNPOS of a row image's first byte, read literally (module docstring); the other bases
# an extract may use, told apart by the LLCOLUMNPOS of the table's first column.
LLCOLUMNPOS_BASE = 4
LLCOLUMNPOS_BASES = (4, 2, 0)


@lru_cache(maxsize=256)
def parse_layout(text: str) -> RowLayout:
    """Read a layout text (cached per string); a malformed one raises ValueError."""
    parts = text.split("|")
    if not LAYOUT_FIELDS <= len(parts) <= LAYOUT_FIELDS + OPTIONAL_LAYOUT_FIELDS:
        raise ValueError(f"layout text has {len(parts)} fields, not {LAYOUT_FIELDS}: {text[:80]!r}")
    encoding, ebcdic, ascii_codec, float_format, lobs, column_text = parts[:LAYOUT_FIELDS]
    mixed = _mixed_codec(parts[LAYOUT_FIELDS] if len(parts) > LAYOUT_FIELDS else "")
    try:
        date_format = values.date_format(parts[7] if len(parts) > LAYOUT_FIELDS + 1 else "")
    except values.DecodeError as exc:
        raise ValueError(str(exc)) from None
    if ebcdic.startswith("ccsid:") or not ebcdic:
        ebcdic = values.ebcdic_codec(ebcdic.removeprefix("ccsid:"))
    columns = sorted(
        (_parse_column(item) for item in column_text.split(";") if item), key=lambda c: c.num
    )
    return RowLayout(
        columns=tuple(columns),
        encoding=encoding.strip() or "E",
        ebcdic_codec=values.check_codec(ebcdic),
        ascii_codec=values.check_codec(ascii_codec or values.DEFAULT_ASCII),
        float_format=(float_format or "hfp").lower(),
        lobs_included=lobs[:1] != "N",
        xml_included=lobs[1:2] != "N",
        mixed_codec=mixed,
        date_format=date_format,
    )


def _mixed_codec(text: str) -> str | None:
    """``ccsid:<n>`` -> that mixed CCSID's codec (None when none); a codec name is checked."""
    if not text.strip():
        return None
    if text.startswith("ccsid:"):
        return values.ebcdic_mixed_codec(text.removeprefix("ccsid:"))
    return values.check_codec(text)


def _parse_column(item: str) -> Column:
    parts = item.split(",")
    if len(parts) == 7:
        parts.append("")
    num, kind, length, scale, nulls, subtype, pos, keyseq = parts
    return Column(
        num=int(num),
        type=kind.strip(),
        length=int(length or 0),
        scale=int(scale or 0),
        nulls=nulls.strip() or "N",
        subtype=subtype.strip(),
        pos=int(pos) if pos else None,
        keyseq=int(keyseq or 0),
    )


def layout_from_control(
    dtbi: dict, dlci: list[dict], ebcdic_ccsid: int | None = None, dateformat: str | None = None
) -> RowLayout:
    """A table's layout from its decoded DTBI and DLCI records (as udfs.logmaster.control
    returns them) and its extract's DLDS DATEFORMAT; the SQL model
    ``int_logmaster_table_layouts`` builds the same from staging."""
    columns = tuple(
        Column(
            num=d["llcolumnnum"],
            type=d["llcolumntype"],
            length=d["llcolumnlen"] or 0,
            scale=d["llscale"] or 0,
            nulls=d["llnulls"] or "N",
            subtype=d["llcolumnsubtype"] or "",
            pos=d["llcolumnpos"],
            keyseq=d.get("keyseq") or 0,
        )
        for d in sorted(dlci, key=lambda d: d["llcolumnnum"])
    )
    return RowLayout(
        columns=columns,
        encoding=dtbi.get("encodingscheme") or "E",
        ebcdic_codec=values.ebcdic_codec(ebcdic_ccsid),
        lobs_included=(dtbi.get("lobsincluded") or "Y") != "N",
        xml_included=(dtbi.get("xmlincluded") or "Y") != "N",
        date_format=values.date_format(dateformat),
    )


def layout_text(layout: RowLayout) -> str:
    """The text form of a layout, as int_logmaster_table_layouts builds it."""
    columns = ";".join(
        ",".join(
            str(part)
            for part in (c.num, c.type, c.length, c.scale, c.nulls, c.subtype, _blank(c.pos))
        )
        + (f",{c.keyseq}" if c.keyseq > 0 else "")
        for c in layout.columns
    )
    lobs = ("Y" if layout.lobs_included else "N") + ("" if layout.xml_included else "N")
    settings = [layout.encoding, layout.ebcdic_codec, layout.ascii_codec, layout.float_format]
    optional = [layout.mixed_codec or ""]
    if layout.date_format != values.DEFAULT_DATE_FORMAT:
        optional.append(layout.date_format)
    elif not layout.mixed_codec:
        optional = []
    return "|".join([*settings, lobs, columns, *optional])


def position_base(layout: RowLayout) -> int:
    """The LLCOLUMNPOS of a row image's first byte in this table's extract: the first
    column's LLCOLUMNPOS when it is one of :data:`LLCOLUMNPOS_BASES`, else the literal 4
    (then the columns' LLCOLUMNPOS values are wrong, and each gets its warning)."""
    first = layout.columns[0].pos if layout.columns else None
    return first if first in LLCOLUMNPOS_BASES else LLCOLUMNPOS_BASE


def _blank(value) -> str:
    return "" if value is None else str(value)


# --- a batch of images ---------------------------------------------------------------------


class _Cursor:
    """One position per row inside the batch buffer, each row's end, and each row's error.

    Rows that are skipped (not decoded at all) or already failed read nothing further.
    """

    def __init__(self, buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray, active):
        self.buffer = buffer
        self.pos = starts.astype(np.int64).copy()
        self.ends = ends.astype(np.int64)
        self.skip = ~np.asarray(active, bool)
        self.failed = np.zeros(len(starts), bool)
        self.errors: dict[int, str] = {}

    def live(self) -> np.ndarray:
        return ~(self.skip | self.failed)

    def fail(self, mask: np.ndarray, reason: str) -> None:
        new = mask & self.live()
        for row in np.flatnonzero(new):
            self.errors[int(row)] = reason
        self.failed |= new

    def take(self, width, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Claim ``width`` bytes at each live row's position; returns (starts, widths)."""
        live = self.live()
        width = np.where(live, np.broadcast_to(np.asarray(width, np.int64), self.pos.shape), 0)
        starts = self.pos.copy()
        over = starts + width > self.ends
        self.fail(over, f"row image ends inside {what}")
        width = np.where(self.live(), width, 0)
        self.pos = starts + width
        return starts, width

    def u16(self, what: str) -> np.ndarray:
        starts, widths = self.take(2, what)
        return np.where(widths == 2, uints(self.buffer, starts, 2, "big").astype(np.int64), 0)


def _render(
    buffer: np.ndarray, starts: np.ndarray, widths: np.ndarray, col: Column, layout: RowLayout
) -> tuple[pa.Array, np.ndarray]:
    """Render the present values of one column (one Arrow array) and flag invalid ones."""
    kind = col.type
    if kind == "INT" and col.length in (2, 4, 8):
        return bv.int_strings(bv.fixed(buffer, starts, col.length))
    if kind == "DEC":
        return bv.packed_decimals(bv.fixed(buffer, starts, col.length), col.scale)
    if kind == "FLOT" and col.length in (4, 8):
        matrix = bv.fixed(buffer, starts, col.length)
        floats = bv.ieee_floats(matrix) if layout.float_format == "ieee" else bv.hfp_floats(matrix)
        return bv.float_strings(floats, col.length == 4)
    if kind in ("DATE", "TIME", "DTTM", "DTTZ"):
        matrix = bv.fixed(buffer, starts, col.length)
        return bv.temporal_strings(matrix, kind, layout.text_codec, layout.date_format)
    data, offsets = bv.ragged(buffer, starts, widths)
    if kind in ("ROWI", "BLOB") or (kind in TEXT_TYPES and col.subtype == "B"):
        return bv.hex_strings(data, offsets), np.zeros(len(starts), bool)
    if kind in DOUBLE_BYTE_TYPES:
        if layout.graphic_codec is None:
            return bv.hex_strings(data, offsets), np.zeros(len(starts), bool)
        if layout.encoding == "U":
            return bv.text_strings(data, offsets, layout.graphic_codec)
        return bv.dbcs_strings(data, offsets, layout.graphic_codec)
    if kind in TEXT_TYPES:
        return bv.text_strings(data, offsets, layout.column_text_codec(col))
    raise values.DecodeError(
        f"column {col.num}: LLCOLUMNTYPE {kind!r} length {col.length} is not one logmart "
        "can decode; see seeds/logmaster_column_types.csv"
    )


def _column(
    cursor: _Cursor, col: Column, layout: RowLayout, image_starts, warnings: dict, base: int
) -> tuple[pa.Array, pa.Array]:
    """Read one column of every live row; returns its rendered values (null where NULL or not
    in the log) and, per row, why its value is not in the log (``udfs.unavailable``; null
    where it is, or is a logged NULL)."""
    what = f"column {col.num} ({col.type})"
    rows = len(cursor.pos)
    if not col.varying and col.length <= 0:  # a blank or damaged DLCI LLCOLUMNLEN
        raise values.DecodeError(
            f"column {col.num}: LLCOLUMNLEN {col.length} is not the length of a {col.type} column"
        )
    if col.pos is not None and col.pos >= 0:
        # LLCOLUMNPOS counts from ``base`` bytes before the row image: a cross-check only.
        offsets = cursor.pos - image_starts + base
        for row in np.flatnonzero((offsets != col.pos) & cursor.live()):
            _warn(warnings, row, f"column {col.num} is not at LLCOLUMNPOS {col.pos}")
    present = np.ones(rows, bool)
    if col.nullable:
        starts, widths = cursor.take(1, f"the null byte of {what}")
        indicator = bv.fixed(cursor.buffer, starts, 1)[:, 0]
        odd = (indicator != 0x00) & (indicator != 0xFF) & (widths == 1)
        cursor.fail(odd, f"null byte of {what} is neither x'00' nor x'FF'")
        present = indicator == 0x00
    if col.varying:
        length = cursor.u16(f"the length of {what}")
        width = length * 2 if col.type in DOUBLE_BYTE_TYPES else length
    else:
        width = np.full(rows, col.length, np.int64)
    starts, widths = cursor.take(width, what)
    chosen = np.flatnonzero(present & cursor.live())
    available = pa.nulls(rows, pa.string())
    excluded = _excluded_reason(col, layout)
    if excluded is not None:
        kind = "LOB" if excluded == unavailable.NOT_LOGGED_LOB else "XML"
        for row in chosen:
            _warn(warnings, row, f"column {col.num}: {kind} not included in the logical log")
        reasons = np.full(rows, None, object)
        reasons[chosen] = excluded
        return pa.nulls(rows, pa.string()), pa.array(reasons, pa.string())
    if not len(chosen):
        return pa.nulls(rows, pa.string()), available
    rendered, bad = _render(cursor.buffer, starts[chosen], widths[chosen], col, layout)
    if bad.any():
        mask = np.zeros(rows, bool)
        mask[chosen[bad]] = True
        cursor.fail(mask, f"{what} holds bytes that are not a valid {col.type} value")
    if col.type in DOUBLE_BYTE_TYPES and layout.graphic_codec is None:
        for row in chosen:
            _warn(warnings, row, f"column {col.num}: DBCS graphic data shown as hex")
    return _scatter(rendered, chosen, rows), available


def _excluded_reason(col: Column, layout: RowLayout) -> str | None:
    """Why a present value of this column is not in the log (DTBI LOBSINCLUDED /
    XMLINCLUDED N), or None when it is."""
    if col.type in LOB_TYPES and not layout.lobs_included:
        return unavailable.NOT_LOGGED_LOB
    if col.type == "XML" and not layout.xml_included:
        return unavailable.NOT_LOGGED_XML
    return None


def _columns_of_image(
    cursor: _Cursor, layout: RowLayout, image_starts, warnings: dict, base: int
) -> list[tuple[pa.Array, pa.Array]]:
    """Every column of one row image per row (values, reasons). A row whose image ended at a
    column boundary (after its first column) was written before the later columns were
    added: they are null, ``added_after_row``, and are not read."""
    read = []
    for index, col in enumerate(layout.columns):
        ended = cursor.live() & (cursor.pos == cursor.ends) if index > 0 else None
        if ended is None or not ended.any():
            read.append(_column(cursor, col, layout, image_starts, warnings, base))
            continue
        saved = cursor.skip
        cursor.skip = saved | ended
        column_values, reasons = _column(cursor, col, layout, image_starts, warnings, base)
        cursor.skip = saved
        why = np.array(reasons.to_pylist(), object)
        why[ended] = unavailable.ADDED_AFTER_ROW
        read.append((column_values, pa.array(why, pa.string())))
    return read


def _scatter(rendered: pa.Array, chosen: np.ndarray, rows: int) -> pa.Array:
    """Values of the chosen rows placed at their rows; null elsewhere."""
    positions = np.full(rows, -1, np.int64)
    positions[chosen] = np.arange(len(chosen))
    return rendered.take(pa.array(positions, mask=positions < 0))


def _warn(warnings: dict, row, text: str) -> None:
    warnings.setdefault(int(row), set()).add(text)


def _value_lists(columns: list[pa.Array], valid: np.ndarray) -> pa.Array:
    """Per row, the list of its column values (column order); null rows where not ``valid``."""
    rows, width = len(valid), len(columns)
    flat = pa.concat_arrays(columns) if columns else pa.array([], pa.string())
    order = (np.arange(rows)[:, None] + rows * np.arange(width)[None, :]).reshape(-1)
    offsets = pa.array(np.arange(0, rows * width + 1, max(width, 1))[: rows + 1], pa.int32())
    if width == 0:
        offsets = pa.array(np.zeros(rows + 1, np.int32))
    return pa.ListArray.from_arrays(
        offsets, flat.take(pa.array(order, pa.int64())), mask=pa.array(~valid)
    )


# --- DATA field -> images --------------------------------------------------------------------

ROW_IMAGES_TYPE = (
    "struct<before_values: array<string>, after_values: array<string>, "
    "warnings: array<string>, error: string, "
    "before_unavailable: array<string>, after_unavailable: array<string>>"
)
_FIELDS = ["before_values", "after_values", "warnings", "error",
           "before_unavailable", "after_unavailable"]  # fmt: skip


def decode_batch(data: pa.Array, change_type: pa.Array, layout: RowLayout) -> pa.StructArray:
    """Decode the DATA fields of rows that share one layout -> the UDF's struct array.

    Rows whose change type carries no row image (DM, DT, DR, CO, …) get no images and no error;
    a DM whose DATA holds more than its length is a partition-level mass delete: its limit keys
    come back as before (low limit) and after (high limit) values in KEYSEQ order
    (:func:`limit_keys`), or its error.
    """
    rows = len(data)
    buffer, starts, lengths = binary_buffers(data)
    types = pc.utf8_trim_whitespace(change_type.cast(pa.string())).fill_null("")
    kinds = types.to_numpy(zero_copy_only=False)
    slots = [
        np.isin(kinds, [t for t, names in IMAGES_BY_CHANGE_TYPE.items() if len(names) > slot])
        for slot in range(2)
    ]
    frame = _Cursor(buffer, starts, starts + lengths, slots[0])
    total = frame.u16("the DATA length")
    frame.fail(total != lengths, "the DATA length field does not match DATA")
    warnings: dict[int, set[str]] = {}
    base = position_base(layout)
    images: list[tuple[list[pa.Array], list[pa.Array], np.ndarray]] = []
    for wanted in slots:
        saved = frame.skip
        frame.skip = saved | ~wanted
        length = frame.u16(f"the length of row image {len(images) + 1}")
        image_starts, widths = frame.take(length, f"row image {len(images) + 1}")
        frame.skip = saved
        cursor = _Cursor(buffer, image_starts, image_starts + widths, wanted & frame.live())
        read = _columns_of_image(cursor, layout, image_starts, warnings, base)
        cursor.fail(cursor.pos != cursor.ends, "row image is longer than the columns of its layout")
        for row, reason in cursor.errors.items():
            frame.fail(_one(rows, row), f"row image {len(images) + 1}: {reason}")
        images.append(([v for v, _ in read], [r for _, r in read], wanted))
    frame.fail(frame.pos != frame.ends, "DATA holds more bytes than its row images")
    ok = frame.live()
    result = _assemble(rows, types, images, ok, warnings, frame.errors)
    limited = np.flatnonzero(np.isin(kinds, LIMIT_KEY_CHANGE_TYPES) & (lengths > 2))
    if not len(limited):
        return result
    return _with_limit_keys(result, limited, buffer, starts, lengths, layout)


# --- a partition-level DM: its limit keys ------------------------------------------------------


@dataclass(frozen=True)
class LimitKeys:
    """The key range a partition-level DM emptied: values of the leading key columns (KEYSEQ
    order). ``low`` is the previous partition's limit key (exclusive), ``high`` this
    partition's (inclusive); an empty list is no bound on that side."""

    low: list[str | None]
    high: list[str | None]
    warnings: list[str]


def limit_keys(data: bytes, layout: RowLayout) -> LimitKeys:
    """Read a partition-level DM's DATA (logmart's reading, docs/logmaster.md "Mass delete of
    one partition"): laid out as DATA always is (README interpretation 3), ``u16 total length
    including itself`` then images each ``u16 length`` + bytes, where an image is a **limit
    key**: the values of the table's leading key columns (DLCI KEYSEQ order), each as a row
    image holds a column (null byte when nullable, u16 length when varying). Two images, as a
    UB carries two: the low limit (the previous partition's limit key; exclusive) and the high
    limit (this partition's limit key; inclusive). One image: the high limit alone (no low
    bound: partition 1). An image of length 0 is no bound on its side. Raises DecodeError."""
    if len(data) < 2 or int.from_bytes(data[:2], "big") != len(data):
        raise values.DecodeError("the DATA length field does not match DATA")
    key = [replace(c, pos=None) for c in sorted(layout.columns, key=lambda c: c.keyseq) if c.keyseq]
    if not key:
        raise values.DecodeError(
            "a DM with limit keys needs the table's key columns (DLCI KEYSEQ); it has none"
        )
    images, at = [], 2
    while at < len(data):
        if at + 2 > len(data):
            raise values.DecodeError("DATA ends inside the length of limit key image")
        length = int.from_bytes(data[at : at + 2], "big")
        if at + 2 + length > len(data):
            raise values.DecodeError(f"limit key image {len(images) + 1} ends after DATA")
        images.append(data[at + 2 : at + 2 + length])
        at += 2 + length
    if len(images) > 2:
        raise values.DecodeError(f"DATA holds {len(images)} limit key images, not 1 or 2")
    warnings: dict[int, set[str]] = {}
    read = [_limit_key(image, key, layout, warnings, n + 1) for n, image in enumerate(images)]
    low, high = ([], *read) if len(read) == 1 else read
    return LimitKeys(low, high, sorted(warnings.get(0, ())))


def _limit_key(
    image: bytes, key: list[Column], layout: RowLayout, warnings: dict, number: int
) -> list[str | None]:
    """The values of the leading key columns one limit key image holds (as many as it has)."""
    buffer = np.frombuffer(image, np.uint8)
    cursor = _Cursor(buffer, np.zeros(1, np.int64), np.full(1, len(image)), [True])
    found: list[str | None] = []
    for col in key:
        if cursor.pos[0] >= len(image):
            break
        value, _ = _column(cursor, col, layout, np.zeros(1, np.int64), warnings, 0)
        if cursor.failed[0]:
            raise values.DecodeError(f"limit key image {number}: {cursor.errors[0]}")
        found.append(value[0].as_py())
    if cursor.pos[0] != len(image):
        raise values.DecodeError(
            f"limit key image {number} is longer than the table's {len(key)} key columns"
        )
    return found


def _with_limit_keys(
    result: pa.StructArray, rows: np.ndarray, buffer, starts, lengths, layout: RowLayout
) -> pa.StructArray:
    """``result`` with the limit keys of the DM rows ``rows`` as before (low) and after (high)
    values, or their error."""
    fields = {name: result.field(name).to_pylist() for name in _FIELDS}
    for row in rows:
        data = buffer[starts[row] : starts[row] + lengths[row]].tobytes()
        try:
            keys = limit_keys(data, layout)
        except values.DecodeError as exc:
            fields["error"][row] = f"partition-level DM: {exc}"
            continue
        fields["before_values"][row] = keys.low
        fields["after_values"][row] = keys.high
        fields["warnings"][row] = keys.warnings
    types = [pa.list_(pa.string())] * 3 + [pa.string()] + [pa.list_(pa.string())] * 2
    return pa.StructArray.from_arrays(
        [pa.array(fields[name], kind) for name, kind in zip(_FIELDS, types, strict=True)],
        names=_FIELDS,
    )


def _assemble(rows, types, images, ok, warnings, errors) -> pa.StructArray:
    """before/after lists by change type, warnings and errors -> the UDF's struct array."""
    (first, first_why, first_wanted), (second, second_why, second_wanted) = images
    kinds = types.to_numpy(zero_copy_only=False)
    first_is_after = pa.array(np.isin(kinds, ["I", "IL"]))
    nulls = pa.nulls(rows, pa.list_(pa.string()))
    sides = []
    for one, two in ((first, second), (first_why, second_why)):
        first_rows = _value_lists(one, ok & first_wanted)
        second_rows = _value_lists(two, ok & second_wanted)
        sides.append(
            (
                pc.if_else(first_is_after, nulls, first_rows),
                pc.if_else(first_is_after, first_rows, second_rows),
            )
        )
    (before, after), (before_why, after_why) = sides
    warning_lists = pa.array(
        [sorted(warnings.get(row, ())) if ok[row] else [] for row in range(rows)]
        if warnings
        else [[]] * rows,
        pa.list_(pa.string()),
    )
    error_texts = pa.array([errors.get(row) for row in range(rows)], pa.string())
    return pa.StructArray.from_arrays(
        [before, after, warning_lists, error_texts, before_why, after_why], names=_FIELDS
    )


def _one(rows: int, row: int) -> np.ndarray:
    mask = np.zeros(rows, bool)
    mask[row] = True
    return mask


@dataclass
class DecodedImages:
    """Per row: before/after values (column order), warnings, an error (None if decoded), and
    per image why each value is not in the log (column order, None where it is)."""

    before: list[list[str | None] | None]
    after: list[list[str | None] | None]
    warnings: list[list[str]]
    errors: list[str | None]
    before_unavailable: list[list[str | None] | None]
    after_unavailable: list[list[str | None] | None]


def decode_data(
    data: list[bytes | None], change_types: list[str | None], layout: RowLayout
) -> DecodedImages:
    """Python-object form of :func:`decode_batch` (tests, notebooks)."""
    result = decode_batch(pa.array(data, pa.binary()), pa.array(change_types, pa.string()), layout)
    columns = {name: result.field(name).to_pylist() for name in _FIELDS}
    return DecodedImages(
        columns["before_values"],
        columns["after_values"],
        columns["warnings"],
        columns["error"],
        columns["before_unavailable"],
        columns["after_unavailable"],
    )


# --- Arrow UDF body ----------------------------------------------------------------------------

_NO_LAYOUT = "no table layout (DTBI/DLCI) for this table in the control file"


def row_images_arrow(data: pa.Array, change_type: pa.Array, layout: pa.Array) -> pa.Array:
    """Spark Arrow UDF body: decode a batch whose rows may belong to several layouts.

    Rows are grouped by layout (a dictionary encoding, no Python loop over rows), each group
    decoded at once, and the results put back in the batch's order. A row without a layout (no
    DLCI for its table) gets an error saying so when its change type carries row images.
    """
    encoded = layout.cast(pa.string()).dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    return decode_groups(data, change_type, codes, encoded.dictionary.to_pylist())


def decode_groups(
    data: pa.Array, change_type: pa.Array, codes: np.ndarray, layouts: list[str]
) -> pa.StructArray:
    """Decode rows grouped by layout: row i uses ``layouts[codes[i]]``, or none when
    ``codes[i]`` is negative. Returns the UDF's struct array in the rows' order."""
    rows = len(data)
    parts: list[pa.StructArray] = []
    order: list[np.ndarray] = []
    for code, text in enumerate(layouts):
        members = np.flatnonzero(codes == code)
        if not len(members):
            continue
        index = pa.array(members)
        parts.append(_decode_group(data.take(index), change_type.take(index), text))
        order.append(members)
    missing = np.flatnonzero(codes < 0)
    if len(missing):
        index = pa.array(missing)
        parts.append(_without_layout(data.take(index), change_type.take(index)))
        order.append(missing)
    if not parts:
        empty_lists = pa.array([], pa.list_(pa.string()))
        return pa.StructArray.from_arrays(
            [empty_lists] * 3 + [pa.array([], pa.string())] + [empty_lists] * 2, names=_FIELDS
        )
    combined = pa.concat_arrays(parts)
    if len(order) == 1:
        return combined
    position = np.empty(rows, np.int64)
    position[np.concatenate(order)] = np.arange(rows)
    return combined.take(pa.array(position))


def _decode_group(data: pa.Array, change_type: pa.Array, text: str) -> pa.StructArray:
    try:
        return decode_batch(data, change_type, parse_layout(text))
    except (ValueError, values.DecodeError) as exc:
        return _failed(len(data), f"table layout unusable: {exc}")


def _without_layout(data: pa.Array, change_type: pa.Array) -> pa.StructArray:
    """Rows without a layout: an error where DATA holds row images or limit keys."""
    types = pc.utf8_trim_whitespace(change_type.cast(pa.string())).fill_null("")
    kinds = types.to_numpy(zero_copy_only=False)
    limited = np.isin(kinds, LIMIT_KEY_CHANGE_TYPES) & (binary_buffers(data)[2] > 2)
    has_images = np.isin(kinds, list(IMAGES_BY_CHANGE_TYPE)) | limited
    rows = len(change_type)
    errors = pa.array(np.where(has_images, _NO_LAYOUT, None).tolist(), pa.string())
    lists = pa.nulls(rows, pa.list_(pa.string()))
    empty = pa.array([[]] * rows, pa.list_(pa.string()))
    return pa.StructArray.from_arrays([lists, lists, empty, errors, lists, lists], names=_FIELDS)


def _failed(rows: int, reason: str) -> pa.StructArray:
    lists = pa.nulls(rows, pa.list_(pa.string()))
    empty = pa.array([[]] * rows, pa.list_(pa.string()))
    return pa.StructArray.from_arrays(
        [lists, lists, empty, pa.array([reason] * rows, pa.string()), lists, lists], names=_FIELDS
    )
