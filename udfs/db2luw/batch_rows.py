"""Db2 LUW row images decoded column-at-a-time: many images of one table layout at once.

:func:`decode_images` gives, for a batch of "record header and data" images decoded with one
:class:`~udfs.db2luw.rows.TableLayout`, the same structs as
:func:`udfs.db2luw.functions.decode_image` gives one at a time (``values``, ``null_reasons``,
``error``, ``is_user_row``, ``record_kind``, ``record_type``, ``unavailable``), faster: each
column is read for every image at once at the offsets of the layout and the construct headers
(:mod:`udfs.db2luw.layouts` ``record_header`` / ``formatted_user_data_header``) and rendered by
the shared vectorised value decoders (:mod:`udfs.batch_values`).

The batch path takes user rows of both formats that hold every column of the layout and
whose bytes all check out: formatted rows (each column at its field offset in the fixed section)
and VALUE COMPRESSION rows (each column between two entries of the offset array; NULL and system
default attribute bytes, out-of-row descriptors). Every other image — a row written before a
column was added, internal or non-user records, a bad null byte or attribute, variable data past
the row's end, a value of the wrong width, a value the scalar decoder would call undecodable —
goes through ``decode_image`` unchanged, so errors, warnings and reasons stay the per-row
decoder's.
Column types without a vectorised form (DECFLOAT, inline LOBs, GRAPHIC in UTF-16, CHAR in a
code page other than UTF-8) are read column-at-a-time but rendered value by value with the
per-row decoder's own value function.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs import batch_values as bv
from udfs.batch import binary_buffers, uints
from udfs.db2luw import rows as r
from udfs.db2luw.layouts import leading_fields
from udfs.db2luw.rows import Column, TableLayout, decode_row
from udfs.errors import DecodeError
from udfs.values import check_codec

# --- the UDF's struct, the layout JSON and the per-row decoding (shared by logmart_db2luw_row and
# the raw load's option images, so that both stay one definition) ---------------------------------

ROW_ARROW = pa.struct(
    [
        ("values", pa.list_(pa.string())),
        ("null_reasons", pa.list_(pa.string())),
        ("error", pa.string()),
        ("is_user_row", pa.bool_()),
        ("record_kind", pa.string()),
        ("record_type", pa.int32()),
        ("unavailable", pa.list_(pa.string())),
    ]
)
DEFAULT_SETTINGS = {"codec": "utf-8", "graphic_codec": "utf-16-be"}


# --- layout JSON --------------------------------------------------------------------------------

# The JSON travels with every row change to the row UDF, so it is positional and compact:
# {"table": [TableLayout fields but columns], "columns": [[Column fields], ...],
#  "settings": [codec, graphic_codec]}; field order is the dataclasses' own.
_TABLE_FIELDS = tuple(f.name for f in dataclasses.fields(TableLayout) if f.name != "columns")
_COLUMN_FIELDS = tuple(f.name for f in dataclasses.fields(Column))


def layout_to_json(layout: TableLayout, settings: dict[str, str]) -> str:
    """A layout and the character settings as the JSON ``logmart_db2luw_row`` reads."""
    chosen = {**DEFAULT_SETTINGS, **settings}
    document = {
        "table": [getattr(layout, name) for name in _TABLE_FIELDS],
        "columns": [[getattr(c, name) for name in _COLUMN_FIELDS] for c in layout.columns],
        "settings": [chosen["codec"], chosen["graphic_codec"]],
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def layout_from_json(text: str) -> tuple[TableLayout, dict[str, str]]:
    document = json.loads(text)
    table = dict(zip(_TABLE_FIELDS, document["table"], strict=True))
    table["key_columns"] = tuple(table["key_columns"] or ())
    # strict=False: a layout JSON written before a Column field was added lacks its last
    # entries, which then take their defaults.
    columns = tuple(
        Column(**dict(zip(_COLUMN_FIELDS, values, strict=False))) for values in document["columns"]
    )
    codec, graphic_codec = document["settings"]
    return TableLayout(columns=columns, **table), {"codec": codec, "graphic_codec": graphic_codec}


def decode_image(
    data: bytes, layout: TableLayout, settings: dict[str, str], byteorder: str | None
) -> dict[str, Any]:
    """One image as the UDF's struct."""
    try:
        row = decode_row(
            data,
            layout,
            byteorder or "little",
            codec=settings["codec"],
            graphic_codec=settings["graphic_codec"],
        )
    except DecodeError as exc:
        return row_failure(f"row image of {layout.qualified_name}: {exc}")
    if row.record_kind != "user_row":
        return {"values": None, "null_reasons": None, "error": None, "is_user_row": False,
                "record_kind": row.record_kind, "record_type": row.record_type,
                "unavailable": None}  # fmt: skip
    names = [column.name for column in layout.columns]
    return {
        "values": [row.values.get(name) for name in names],
        "null_reasons": [row.none_sources.get(name) for name in names],
        "error": None,
        "is_user_row": True,
        "record_kind": row.record_kind,
        "record_type": row.record_type,
        "unavailable": [row.unavailable.get(name) for name in names],
    }


def row_failure(reason: str) -> dict[str, Any]:
    return {"values": None, "null_reasons": None, "error": reason, "is_user_row": None,
            "record_kind": None, "record_type": None, "unavailable": None}  # fmt: skip


# --- column-at-a-time --------------------------------------------------------------------------

_INTEGERS = frozenset((r.SMALLINT, r.INTEGER, r.BIGINT))
_TEMPORAL = {r.DATE: "DATE", r.TIME: "TIME", r.TIMESTAMP: "TIMESTAMP"}


@functools.cache
def _header_offsets(byteorder: str) -> dict[str, tuple[int, int]]:
    """(offset, width) in an image of its record header's and formatted header's fields."""
    record = leading_fields("record_header", byteorder)
    formatted = leading_fields("formatted_user_data_header", byteorder)
    size = record[-1].end
    found = {f"record_{f.name}": (f.offset, f.width) for f in record}
    found.update({f"formatted_{f.name}": (size + f.offset, f.width) for f in formatted})
    found["data"] = (size + formatted[-1].end, 0)
    return found


def decode_images(
    images: pa.Array, layout: r.TableLayout, settings: dict[str, str], byteorder: str
) -> pa.StructArray:
    """Every image of ``images`` (binary, nulls allowed) decoded with ``layout``: the structs of
    :func:`udfs.db2luw.functions.decode_image`, in order (a null image gives a null)."""
    byteorder = byteorder or "little"
    if images.null_count == len(images):  # e.g. the before images of a batch of inserts
        return pa.nulls(len(images), ROW_ARROW)
    codec, graphic = check_codec(settings["codec"]), check_codec(settings["graphic_codec"])
    plan = r._plan(layout, byteorder, codec, graphic)
    data, starts, lengths = binary_buffers(images)
    null = np.zeros(len(images), bool)
    if images.null_count:
        null = images.is_null().to_numpy(zero_copy_only=False)
    formatted, compressed = _batch_rows(data, starts, lengths, plan, byteorder)
    formatted &= ~null
    compressed &= ~null
    if (formatted | null).all():
        # the common case: every image takes the batch path, decoded in place (a null image
        # is a null struct), with no rows to move around
        columns, reasons, doubtful = _columns(
            data, starts, lengths, plan, byteorder, codec, absent=null
        )
        if not doubtful.any():
            every = np.ones(len(images), bool)
            return _assemble(columns, reasons, plan, data, starts, every, null=null)
    parts, placed = [], []
    for rows, value_compressed in ((formatted, False), (compressed, True)):
        chosen = np.flatnonzero(rows)
        if not len(chosen):
            continue
        columns, reasons, doubtful = _columns(
            data, starts[chosen], lengths[chosen], plan, byteorder, codec,
            value_compressed=value_compressed,
        )  # fmt: skip
        keep = ~doubtful
        parts.append(_assemble(columns, reasons, plan, data, starts[chosen[keep]], keep))
        placed.append(chosen[keep])
    slow = np.setdiff1d(
        np.arange(len(images)), np.concatenate([*placed, np.zeros(0, np.int64)]), assume_unique=True
    )
    if len(slow):
        slow_images = images.take(pa.array(slow)).to_pylist()
        parts.append(pa.array(
            [None if image is None else decode_image(image, layout, settings, byteorder)
             for image in slow_images],
            ROW_ARROW,
        ))  # fmt: skip
        placed.append(slow)
    if len(parts) == 1 and len(placed[0]) == len(images):
        return parts[0]  # one kind of row, in order
    order = np.empty(len(images), np.int64)
    done = 0
    for rows in placed:
        order[rows] = done + np.arange(len(rows))
        done += len(rows)
    return pa.concat_arrays(parts).take(pa.array(order))


def _batch_rows(data, starts, lengths, plan, byteorder) -> tuple[np.ndarray, np.ndarray]:
    """Images the batch path takes (the row decoder's checks, for every image at once): user
    rows in the formatted format whose fixed section holds every column of the layout, and
    VALUE COMPRESSION rows holding every column of the layout in their offset array."""
    at = _header_offsets(byteorder)
    ok = lengths >= at["data"][0]
    outer = bv.fixed(data, starts + at["record_record_type"][0], 1)[:, 0].astype(np.int64)
    ok &= (outer == 0x00) | (outer == 0x10) | (outer & 0x04 != 0)
    record_length = uints(data, starts + at["record_record_length"][0], 2, byteorder)
    ok &= record_length.astype(np.int64) == lengths
    inner = bv.fixed(data, starts + at["formatted_record_type"][0], 1)[:, 0]
    # the formatted header's fixed length is the VALUE COMPRESSION header's number of columns
    size = uints(data, starts + at["formatted_fixed_length"][0], 2, byteorder).astype(np.int64)
    needed = max(
        (e.column.field_offset + e.column.fixed_width + e.column.nullable for e in plan), default=0
    )
    formatted = ok & (inner & 0x01 != 0) & (at["data"][0] + size <= lengths) & (needed <= size)
    offset_array = at["data"][0] + 2 * (len(plan) + 1)
    compressed = ok & (inner & 0x03 == 0x02) & (size == len(plan)) & (offset_array <= lengths)
    return formatted, compressed


@dataclasses.dataclass
class _Place:
    """Where one column's value is in each row: ``present`` rows have it at ``start`` (``size``
    bytes, or the column's fixed width when ``size`` is None); the others are a logged NULL,
    out of row, the system default, absent (a null image), or ``doubtful`` (the row goes to
    the row decoder)."""

    present: np.ndarray
    start: np.ndarray
    size: np.ndarray | None
    null: np.ndarray
    out_of_row: np.ndarray
    default: np.ndarray
    doubtful: np.ndarray


def _formatted_place(data, base, row_end, column, byteorder, absent) -> _Place:
    """A formatted row: the fixed portion at the column's field offset, then its null byte; a
    varying or LOB column's portion points (offset, length) at the variable data."""
    rows = len(base)
    at = base + column.field_offset
    doubtful = np.zeros(rows, bool)
    null = np.zeros(rows, bool)
    if column.nullable:
        null_byte = bv.fixed(data, at + column.fixed_width, 1)[:, 0]
        # decode_row: 'null byte ... not 00/01', a row error
        doubtful |= (null_byte > 1) & ~absent
        null = (null_byte == 1) & ~absent
    present = ~null & ~absent
    out_of_row = np.zeros(rows, bool)
    size = None
    if column.varying or column.field_type in r.LOB_TYPES:
        offset = uints(data, at, 2, byteorder).astype(np.int64)
        size = uints(data, at + 2, 2, byteorder).astype(np.int64)
        out_of_row = present & (offset & 0x8000 != 0)
        present &= ~out_of_row
        at = base + offset
        past_end = present & (at + size > row_end)
        doubtful |= past_end  # decode_row: 'variable data ... runs past', a row error
        present &= ~past_end
    return _Place(present, at, size, null, out_of_row, np.zeros(rows, bool), doubtful)


def _compressed_place(data, base, row_end, index, column, byteorder, absent) -> _Place:
    """A VALUE COMPRESSION row (interpretation 11): the value runs from the column's entry of
    the offset array to the next one's, both counted from the array's start; an entry with
    0x8000 points at an attribute byte (01 NULL, 80 system default) or, for a varying column,
    at a 24-byte out-of-row descriptor."""
    entry = uints(data, base + 2 * index, 2, byteorder).astype(np.int64)
    after = uints(data, base + 2 * index + 2, 2, byteorder).astype(np.int64)
    start, end = base + (entry & 0x7FFF), base + (after & 0x7FFF)
    size = end - start
    # decode_row: 'data ... is outside the row', a row error
    doubtful = ~absent & ((size < 0) | (end > row_end))
    attribute = ~absent & ~doubtful & (entry & 0x8000 != 0)
    first = bv.fixed(data, start, 1)[:, 0]
    null = attribute & (size == 1) & (first == 0x01)
    default = attribute & (size == 1) & (first == 0x80)
    out_of_row = attribute & (size == r.OUT_OF_ROW_DESCRIPTOR) & column.varying
    doubtful |= attribute & ~(null | default | out_of_row)  # neither: a row error
    present = ~absent & ~doubtful & ~attribute
    if not (column.varying or column.field_type in r.LOB_TYPES):
        # a fixed-width value of another width: the row decoder says what it is
        doubtful |= present & (size != column.fixed_width)
        present &= size == column.fixed_width
        size = None
    return _Place(present, start, size, null, out_of_row, default, doubtful)


def _columns(data, starts, lengths, plan, byteorder, codec, absent=None, value_compressed=False):
    """Per column of the layout: (Arrow strings over all rows, none_source per row or None);
    and the rows the per-row decoder must take instead. ``absent`` rows (null images) are
    neither read nor flagged."""
    rows = len(starts)
    absent = np.zeros(rows, bool) if absent is None else absent
    base = starts + _header_offsets(byteorder)["data"][0]
    row_end = starts + lengths
    doubtful = np.zeros(rows, bool)
    columns, reasons = [], []
    for index, entry in enumerate(plan):
        column = entry.column
        if value_compressed:
            place = _compressed_place(data, base, row_end, index, column, byteorder, absent)
        else:
            place = _formatted_place(data, base, row_end, column, byteorder, absent)
        doubtful |= place.doubtful
        take = np.flatnonzero(place.present)
        if place.size is None:
            matrix = bv.fixed(data, place.start[take], column.fixed_width)
            value_data = matrix.reshape(-1)
            value_offsets = np.arange(len(take) + 1, dtype=np.int32) * column.fixed_width
        else:
            matrix = None
            value_data, value_offsets = bv.ragged(data, place.start[take], place.size[take])
        texts, bad, value_reasons = _render(entry, matrix, value_data, value_offsets,
                                            byteorder, codec)  # fmt: skip
        doubtful[take[bad]] = True
        position = np.full(rows, -1, np.int64)
        position[take] = np.arange(len(take))
        every_row = len(take) == rows
        columns.append(texts if every_row else texts.take(pa.array(position, mask=position < 0)))
        why = None
        if place.null.any() or place.out_of_row.any() or value_reasons is not None:
            why = np.full(rows, None, object)
            why[place.null] = "null"
            why[place.out_of_row] = "out_of_row"
            if value_reasons is not None:
                why[take] = np.where(value_reasons == None, why[take], value_reasons)  # noqa: E711
        if place.default.any():
            columns[-1], why = _with_default(entry, place.default, columns[-1], why)
        reasons.append(why)
    return columns, reasons, doubtful


def _with_default(entry, default: np.ndarray, texts: pa.Array, why):
    """The rendered system default in the rows whose attribute byte says so (or its
    none_source, when the log does not hold the value: a DATE/TIME/TIMESTAMP default)."""
    try:
        value = entry.default()
    except r._Reason as reason:
        why = np.full(len(default), None, object) if why is None else why
        why[default] = reason.reason
        return texts, why
    return pc.if_else(pa.array(default), pa.scalar(value, pa.string()), texts), why


def _render(entry, matrix, data, offsets, byteorder, codec):
    """(texts, bad mask, none_source per value or None) of one column's present values."""
    column = entry.column
    t = column.field_type
    count = len(offsets) - 1
    if count == 0:
        return pa.array([], pa.string()), np.zeros(0, bool), None
    if t in _INTEGERS:
        return (*bv.int_strings(matrix, byteorder), None)
    if t == r.DECIMAL:
        return (*bv.packed_decimals(matrix, column.scale or 0), None)
    if t in (r.REAL, r.DOUBLE):
        return (*bv.float_strings(bv.ieee_floats(matrix, byteorder), matrix.shape[1] == 4), None)
    if t == r.BOOLEAN:
        return (*bv.boolean_strings(matrix), None)
    if t in _TEMPORAL:
        found = bv.packed_temporal_strings(matrix, _TEMPORAL[t])
        if found is not None:
            return (*found, None)
    if t in (r.BINARY, r.VARBINARY) or (t in (r.CHAR, r.VARCHAR) and column.for_bit_data):
        return bv.hex_strings(data, offsets), np.zeros(count, bool), None
    if t in (r.CHAR, r.VARCHAR) and codec.replace("-", "").lower() == "utf8":
        return (*bv.text_strings(data, offsets, codec), None)
    return _each(entry.decode, data, offsets)


def _each(decode, data: np.ndarray, offsets: np.ndarray):
    """The per-row decoder's value function on each value; a value it gives no text for has
    its none_source, one it cannot decode is flagged (the row decoder then says why)."""
    count = len(offsets) - 1
    texts: list[str | None] = [None] * count
    bad = np.zeros(count, bool)
    why = np.full(count, None, object)
    raw = bv.binary_array(data, offsets.astype(np.int32)).to_pylist()
    for row, value in enumerate(raw):
        try:
            texts[row] = decode(value)
        except r._Reason as reason:
            why[row] = reason.reason
        except DecodeError:
            bad[row] = True
    has_reasons = any(reason is not None for reason in why)
    return pa.array(texts, pa.string()), bad, why if has_reasons else None


def _assemble(columns, reasons, plan, data, starts, keep, null=None) -> pa.StructArray:
    """The rows of ``keep`` as the UDF's structs: one list per row, its columns in order;
    ``null`` rows (of the kept ones) are null structs."""
    rows = int(keep.sum())
    width = len(plan)
    keep_index = pa.array(np.flatnonzero(keep))
    list_offsets = pa.array(np.arange(rows + 1, dtype=np.int32) * width)
    # column-major (every row's column 0, then column 1, ...) -> row-major
    order = pa.array((np.arange(width)[None, :] * rows + np.arange(rows)[:, None]).reshape(-1))

    def row_lists(per_column: list[pa.Array]) -> pa.Array:
        if not width:
            return pa.ListArray.from_arrays(list_offsets, pa.array([], pa.string()))
        kept = per_column if keep.all() else [c.take(keep_index) for c in per_column]
        flat = pa.concat_arrays(kept).take(order)
        return pa.ListArray.from_arrays(list_offsets, flat)

    all_null = pa.nulls(rows, pa.string())
    null_reasons, unavailable = [], []
    for entry, why in zip(plan, reasons, strict=True):
        if why is None:
            null_reasons.append(all_null)
            unavailable.append(all_null)
            continue
        why = why[keep]
        null_reasons.append(pa.array(why.tolist(), pa.string()))
        named = {reason: r.unavailable_reason(entry.column, reason)
                 for reason in set(why.tolist()) if reason is not None}  # fmt: skip
        unavailable.append(pa.array([None if w is None else named[w] for w in why], pa.string()))
    outer = bv.fixed(data, starts, 1)[:, 0].astype(np.int32)
    arrays = [
        row_lists(columns),
        _lists_of(null_reasons, rows, width, list_offsets, order),
        pa.nulls(rows, pa.string()),
        pa.array(np.ones(rows, bool)),
        pa.array(["user_row"] * rows, pa.string()),
        pa.array(outer, pa.int32()),
        _lists_of(unavailable, rows, width, list_offsets, order),
    ]
    mask = pa.array(null) if null is not None and null.any() else None
    return pa.StructArray.from_arrays(arrays, fields=list(ROW_ARROW), mask=mask)


def _lists_of(per_column, rows, width, list_offsets, order) -> pa.Array:
    """Lists from per-column arrays that already hold only the kept rows."""
    if not width:
        return pa.ListArray.from_arrays(list_offsets, pa.array([], pa.string()))
    if all(c.null_count == rows for c in per_column):
        return pa.ListArray.from_arrays(list_offsets, pa.nulls(rows * width, pa.string()))
    return pa.ListArray.from_arrays(list_offsets, pa.concat_arrays(per_column).take(order))


# --- row images decoded while the log is read (the data source's option images) -----------------

INLINE_FIELDS = [
    ("image_digest", pa.string()),
    ("before_row", ROW_ARROW),
    ("after_row", ROW_ARROW),
]


def image_digest(layout_json: str, byteorder: str) -> str:
    """What identifies a decoding: the layout JSON (layout and character settings) and the
    byte order; int_db2luw_row_images_decoded computes the same with
    ``sha2(concat_ws(char(0), layout_json, byteorder), 256)``."""
    return hashlib.sha256("\0".join([layout_json, byteorder]).encode()).hexdigest()


def catalog_decodings(
    layouts: dict[tuple[int, int], r.TableLayout], settings: dict[str, str], byteorder: str
) -> dict[tuple[int, int], tuple[r.TableLayout, str]]:
    """Per table ids of a catalog export: the layout and the digest of decoding with it."""
    return {
        ids: (layout, image_digest(layout_to_json(layout, settings), byteorder))
        for ids, layout in layouts.items()
    }


def inline_images(
    batch: pa.RecordBatch,
    decodings: dict[tuple[int, int], tuple[r.TableLayout, str]],
    settings: dict[str, str],
    byteorder: str,
) -> pa.RecordBatch:
    """``batch`` (rows of ``udfs.db2luw.readers.LOG_SCHEMA``) with :data:`INLINE_FIELDS`: each
    decoded record's before and after image decoded with its table's catalog layout, and that
    decoding's digest. The model takes them only where the digest is the one of the layout
    version it picked itself (the catalog's layout is not the one in force before an ALTER),
    and sends every other image to ``logmart_db2luw_row``; a disagreement costs time, never a
    wrong value. Insert multiple records (their ``images``) are left to the UDF."""
    rows = batch.num_rows
    columns = {name: pa.nulls(rows, kind) for name, kind in INLINE_FIELDS}
    if rows and decodings:
        columns.update(_inline_columns(batch, decodings, settings, byteorder))
    arrays = batch.columns + [columns[name] for name, _ in INLINE_FIELDS]
    names = batch.schema.names + [name for name, _ in INLINE_FIELDS]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _inline_columns(batch, decodings, settings, byteorder) -> dict[str, pa.Array]:
    eligible = batch.column("decode_error").is_null().to_numpy(zero_copy_only=False)
    eligible &= batch.column("images").is_null().to_numpy(zero_copy_only=False)
    before, after = batch.column("before_image"), batch.column("after_image")
    eligible &= ~(
        before.is_null().to_numpy(zero_copy_only=False)
        & after.is_null().to_numpy(zero_copy_only=False)
    )
    space = batch.column("table_space_identifier").fill_null(-1).to_numpy()
    table = batch.column("table_identifier").fill_null(-1).to_numpy()
    keys = space.astype(np.int64) << 32 | (table.astype(np.int64) & 0xFFFFFFFF)
    found = [
        (np.flatnonzero(eligible & (keys == (ts << 32 | tid))), layout, digest)
        for (ts, tid), (layout, digest) in decodings.items()
    ]
    found = [(members, layout, digest) for members, layout, digest in found if len(members)]
    if not found:
        return {}
    code = np.full(batch.num_rows, -1, np.int64)
    for n, (members, _, _) in enumerate(found):
        code[members] = n
    digests = pa.array([digest for _, _, digest in found], pa.string())
    columns = {"image_digest": digests.take(pa.array(code, mask=code < 0))}
    if len(found) == 1:
        # one table in the batch (the common case): decode the columns in place, the rows
        # not taken as nulls, so that nothing is gathered or scattered
        (members, layout, _) = found[0]
        taken = pa.array(code >= 0)
        null = pa.scalar(None, pa.binary())
        for name, images in (("before_row", before), ("after_row", after)):
            images = pc.if_else(taken, images, null)
            columns[name] = decode_images(images, layout, settings, byteorder)
        return columns
    where = np.full(batch.num_rows, -1, np.int64)
    at = np.concatenate([members for members, _, _ in found])
    where[at] = np.arange(len(at))
    back = pa.array(where, mask=where < 0)
    for name, images in (("before_row", before), ("after_row", after)):
        parts = [
            decode_images(images.take(pa.array(members)), layout, settings, byteorder)
            for members, layout, _ in found
        ]
        columns[name] = pa.concat_arrays(parts).take(back)
    return columns
