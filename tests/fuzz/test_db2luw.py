"""Property tests of the Db2 LUW decoders: log manager header, DMS/DOM/RDS and transaction
manager records, db2ReadLog buffers, formatted user data rows, the catalog export, and the SQL
function bodies.

(a) Random bytes: DecodeError or a value from the record decoders; the batch/UDF bodies never
    raise and give one row per row in.
(b) Round trips with the generator's encoders (logmart_generators/db2luw.py, struct.pack at the
    spec offsets): a random table's initialize-table record and catalog export give a layout
    that reads the generator's row images back as the generator renders the values.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import struct
import tempfile
from decimal import Context, Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from logmart_generators import db2luw as gen
from tests.db2luw import handmade
from tests.fuzz.support import decodes_or_rejects, fuzz
from udfs.db2luw import batch_rows, functions, readers, records, rows
from udfs.framing import DB2_PREFIX_LENGTHS, FrameBatch

ORDERS = st.sampled_from(["little", "big"])
_BO = {"little": "<", "big": ">"}
_RECORD_TYPES = [0x4E, 0x43, 0x84, 0x41, 0x8A, 0x00, 0x99]
_FUNCTIONS = {
    1: [*sorted(records.DMS_FUNCTIONS), 7, 250],
    4: [*sorted(records.DOM_FUNCTIONS), 99],
    5: [1, 2],
    11: [*sorted(records.RDS_FUNCTIONS), 9],
    3: [0],  # not a component
}

# --- log records -----------------------------------------------------------------------------


@fuzz(200)
@given(st.binary(max_size=120), ORDERS)
def test_log_records_on_any_bytes(raw, byteorder):
    decoded = decodes_or_rejects(records.decode_record, raw, byteorder)
    assert decoded is None or set(decoded) == set(records.RECORD_KEYS)


@st.composite
def component_bodies(draw) -> bytes:
    """A component byte and function id logmart knows (mostly), then any bytes."""
    component = draw(st.sampled_from(sorted(_FUNCTIONS)))
    function = draw(st.sampled_from(_FUNCTIONS[component]))
    return bytes([component, function]) + draw(st.binary(max_size=160))


@fuzz(600)
@given(ORDERS, st.sampled_from(_RECORD_TYPES), st.integers(0, 0xFFFF),
       st.one_of(component_bodies(), st.binary(max_size=60)), st.binary(max_size=20))  # fmt: skip
def test_log_records_with_a_valid_header_and_any_body(byteorder, rtype, flags, body, extension):
    bo = _BO[byteorder]
    raw = handmade.record(bo, body, rtype=rtype, flags=flags, extension=extension)
    decoded = decodes_or_rejects(records.decode_record, raw, byteorder)
    if decoded is not None:
        assert decoded["record_length"] == len(raw) and decoded["kind"] is not None
        for image in (decoded["before_image"], decoded["after_image"], *(decoded["images"] or [])):
            assert image is None or image in raw


@fuzz(200)
@given(st.binary(max_size=300), ORDERS, st.sampled_from(["filter", "lsn"]))
def test_db2readlog_buffers_on_any_bytes(raw, byteorder, framing):
    try:
        for framed in records.iter_log_records(raw, framing, byteorder):
            assert framed.record in raw
    except records.DecodeError as exc:
        assert str(exc)


def _framed(record: bytes, bo: str, framing: str, lfs: int = 7) -> bytes:
    length, _, _, lsn = struct.unpack_from(bo + "IHHQ", record)
    if framing == "lsn":
        return struct.pack(bo + "Q", lsn) + record
    return struct.pack(bo + "QQQQQQIi", 1, lfs, lsn, 0, 0, 0, length, 0) + record


@fuzz(300)
@given(st.lists(st.tuples(st.sampled_from(_RECORD_TYPES), st.integers(0, 0xFFFF),
                          st.one_of(component_bodies(), st.binary(max_size=40))),
                min_size=1, max_size=10),
       ORDERS, st.sampled_from(["filter", "lsn"]), st.integers(-3, 3),
       st.one_of(st.integers(0, 2**64 - 1), st.just(2**63)), st.integers(0, 2**64 - 1))  # fmt: skip
def test_log_batches_never_raise(items, byteorder, framing, sqlcode, lfs, lsn):
    """readers.log_batch (the data source's decoder) on framed records with any bodies."""
    bo = _BO[byteorder]
    framed = []
    for n, (rtype, flags, body) in enumerate(items):
        record = handmade.record(bo, body, rtype=rtype, flags=flags, lsn=(lsn + n) % 2**64)
        frame = bytearray(_framed(record, bo, framing, lfs))
        if framing == "filter" and n == 0:
            frame[52:56] = struct.pack(bo + "i", sqlcode)
        framed.append(bytes(frame))
    lengths = np.array([len(f) for f in framed], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    batch = FrameBatch(b"".join(framed), 0, starts, lengths)
    out = pa.Table.from_batches(list(readers.log_batch(batch, "c", "c/S0.log", framing, byteorder)))
    assert out.num_rows == len(items)
    assert out.column("record_bytes").to_pylist() == framed
    assert out.column("prefix_length").to_pylist() == [DB2_PREFIX_LENGTHS[framing]] * len(items)
    _same_as_per_record(batch, framing, byteorder)


def _same_as_per_record(batch: FrameBatch, framing: str, byteorder: str) -> None:
    """The data source's column-at-a-time decoder gives the per-record decoder's rows exactly."""
    fast = list(readers.log_batch(batch, "c", "c/S0.log", framing, byteorder))
    slow = list(readers.log_batch_per_record(batch, "c", "c/S0.log", framing, byteorder))
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow, strict=True):
        assert a.to_pylist() == b.to_pylist()
        assert a.equals(b)


@st.composite
def batch_path_records(draw, bo: str) -> bytes:
    """A record of a kind the batch path decodes (insert, delete, update, commit), sometimes
    with a few bytes overwritten: the lengths, flags and values around its edges."""
    kind = draw(st.sampled_from(["insert", "delete", "update", "commit", "commit_time_only"]))
    data_bytes = draw(st.binary(max_size=30))
    image = struct.pack(bo + "BBH", draw(st.integers(0, 1)), 0, 4 + len(data_bytes)) + data_bytes
    rid = draw(st.binary(min_size=6, max_size=6))
    if kind in ("insert", "delete", "update"):
        function = {"insert": 162, "delete": 161, "update": 163}[kind]
        head = struct.pack(bo + "BBHH", 1, function, draw(st.integers(0, 3)), 9)
        fields = struct.pack(bo + "HHH6sH", draw(st.integers(0, 0xFFFF)), len(image), 5, rid, 7)
        body = head + fields + image
        if kind == "update":
            body += head + fields + image[::-1][: len(image)]
        rtype = 0x4E
    else:
        seconds = draw(st.one_of(st.integers(0, 2**35), st.integers(0, 2**64 - 1)))
        authid = draw(st.binary(max_size=10))
        body = struct.pack(bo + "Q", seconds)
        if kind == "commit":
            body += struct.pack(bo + "H", len(authid)) + authid
        rtype = 0x84
    record = bytearray(handmade.record(bo, body, rtype=rtype, flags=draw(st.integers(0, 0xFFFF)),
                                       lsn=draw(st.integers(0, 2**64 - 1))))  # fmt: skip
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(record) - 1))
        record[at] = draw(st.integers(0, 255))
    return bytes(record)


@fuzz(400)
@given(ORDERS, st.sampled_from(["filter", "lsn"]), st.data())
def test_batch_path_records_decode_as_record_by_record(byteorder, framing, draw):
    """Records of the kinds the column-at-a-time path takes, intact or with bytes overwritten
    (a length, a type, an image header), in one batch: the same rows as record by record."""
    bo = _BO[byteorder]
    records_ = draw.draw(st.lists(batch_path_records(bo), min_size=1, max_size=12))
    frames = [_framed(record, bo, framing) for record in records_]
    lengths = np.array([len(f) for f in frames], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    _same_as_per_record(FrameBatch(b"".join(frames), 0, starts, lengths), framing, byteorder)


# --- rows: random tables built by the generator ------------------------------------------------

_SIMPLE = ["SMALLINT", "INTEGER", "BIGINT", "REAL", "DOUBLE", "DECFLOAT16", "DECFLOAT34",
           "DATE", "TIME", "TIMESTAMP", "BOOLEAN"]  # fmt: skip


@st.composite
def columns(draw, number: int) -> gen.Col:
    kind = draw(st.sampled_from([*_SIMPLE, "DECIMAL", "CHARACTER", "VARCHAR", "GRAPHIC",
                                 "VARGRAPHIC", "BINARY", "VARBINARY", "CLOB", "BLOB"]))  # fmt: skip
    nullable, compress = draw(st.booleans()), draw(st.booleans())
    name = f"C{number}"
    if kind in _SIMPLE:
        scale = 6 if kind == "TIMESTAMP" else 0
        length = 10 if kind == "TIMESTAMP" else 0
        return gen.Col(name, kind, length, scale, nullable, compress)
    if kind == "DECIMAL":
        # up to 28 digits: gen.encode_value scales in the default decimal context (28 digits)
        precision = draw(st.integers(1, 28))
        return gen.Col(name, kind, precision, draw(st.integers(0, precision)), nullable, compress)
    if kind in ("CLOB", "BLOB"):
        return gen.Col(name, kind, 1024, 0, nullable, compress, inline=200)
    return gen.Col(name, kind, draw(st.integers(1, 30)), 0, nullable, compress)


_BMP = st.characters(codec="utf-8", exclude_categories=["Cs"], max_codepoint=0xFFFF)


def _value(draw, col: gen.Col):
    value = _any_value(draw, col)
    if col.compress and gen.is_system_default(col, value) and col.type in _ZEROS:
        # a negative zero or 0E+n is the system default too, and the log keeps no sign or
        # exponent of it: the zero it holds is the plain one
        return _ZEROS[col.type]
    return value


_ZEROS = {"DOUBLE": 0.0, "REAL": 0.0, "DECIMAL": Decimal(0), "DECFLOAT16": Decimal(0),
          "DECFLOAT34": Decimal(0)}  # fmt: skip


def _any_value(draw, col: gen.Col):
    if col.nullable and draw(st.integers(0, 9)) == 0:
        return None
    t = col.type
    if t in ("SMALLINT", "INTEGER", "BIGINT"):
        bits = {"SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}[t]
        return draw(st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
    if t == "DECIMAL":
        limit = 10**col.length - 1
        return Decimal(draw(st.integers(-limit, limit))).scaleb(-col.scale, Context(prec=40))
    if t == "REAL":  # dyadic values with at most 7 significant digits: one text in both widths
        return draw(st.integers(-(2**12), 2**12)) / 2 ** draw(st.integers(0, 4))
    if t == "DOUBLE":
        return draw(st.floats(allow_nan=False, allow_infinity=False))
    if t.startswith("DECFLOAT"):
        digits, low, high = {"DECFLOAT16": (16, -398, 369), "DECFLOAT34": (34, -6176, 6111)}[t]
        coefficient = draw(st.integers(0, 10**digits - 1))
        return Decimal((draw(st.integers(0, 1)), tuple(map(int, str(coefficient))),
                        draw(st.integers(low, high))))  # fmt: skip
    moment = draw(st.datetimes(min_value=dt.datetime(1000, 1, 1)))
    if t == "DATE":
        return moment.date()
    if t == "TIME":
        return moment.time().replace(microsecond=0)
    if t == "TIMESTAMP":
        return moment
    if t == "BOOLEAN":
        return draw(st.booleans())
    if t in ("CHARACTER", "VARCHAR"):
        text = draw(st.text(_BMP, max_size=col.length))
        while len(text.encode("utf-8")) > col.length:
            text = text[:-1]
        return text.rstrip(" ") if t == "CHARACTER" else text
    if t in ("GRAPHIC", "VARGRAPHIC"):
        text = draw(st.text(_BMP, max_size=col.length))
        return text.rstrip(" ") if t == "GRAPHIC" else text
    if t == "BINARY":
        return draw(st.binary(min_size=col.length, max_size=col.length))
    if t in ("VARBINARY", "BLOB"):
        value = draw(st.binary(max_size=min(col.length, 60)))
        # gen.is_system_default takes any all-zero VARBINARY for the system default (which is
        # the empty value) and compresses it away: keep such values out of compressed columns
        return value if any(value) or not col.compress else b""
    if t == "CLOB":
        return draw(st.text(_BMP, max_size=40))
    raise AssertionError(t)


def _render(col: gen.Col, value) -> str | None:
    if col.type == "CLOB":
        return value
    if col.type == "REAL" and value is not None:
        return repr(float(value))
    return gen.render(col, value)


@st.composite
def tables_and_rows(draw):
    cols = [draw(columns(n)) for n in range(1, draw(st.integers(1, 8)) + 1)]
    table = gen.Table("S", "T", 2, 10, cols, key=cols[0].name,
                      value_compression=draw(st.booleans()))  # fmt: skip
    values = [{c.name: _value(draw, c) for c in cols} for _ in range(draw(st.integers(1, 4)))]
    return table, values


def _catalog_layout(table: gen.Table) -> rows.TableLayout:
    folder = Path(tempfile.mkdtemp(prefix="logmart-fuzz-"))
    try:
        gen.write_catalog(folder, [table])
        return rows.read_catalog(folder)[(table.ts, table.tid)]
    finally:
        for name in os.listdir(folder):
            os.unlink(folder / name)
        os.rmdir(folder)


@fuzz(200)
@given(tables_and_rows(), ORDERS)
def test_rows_round_trip(table_and_values, byteorder):
    table, values = table_and_values
    bo = _BO[byteorder]
    init = records.decode_record(handmade.record(bo, gen.initialize_table_body(bo, table, 5)),
                                 byteorder)  # fmt: skip
    names = [c.name for c in table.cols]
    from_log = rows.TableLayout.from_descriptors(init["new_columns"], names)
    for layout in (from_log, _catalog_layout(table)):
        for row in values:
            image = gen.row_image(table, row, 0, bo)
            body = gen.insert_body(bo, 162, table.ts, table.tid, image, b"\0\0\1\0\0\0")
            decoded = records.decode_record(handmade.record(bo, body), byteorder)
            assert decoded["after_image"] == image and decoded["kind"] == "row_insert"
            got = rows.decode_row(image, layout, byteorder)
            assert got.record_kind == rows.USER_ROW
            assert got.values == {c.name: _render(c, row[c.name]) for c in table.cols}
            for name, value in got.values.items():
                assert (value is None) == (name in got.none_sources)


@st.composite
def any_layouts(draw) -> rows.TableLayout:
    cols = []
    for number in range(draw(st.integers(0, 6))):
        field_type = draw(st.sampled_from([*sorted(records.FIELD_TYPES), 0x0999]))
        cols.append(rows.Column(
            name=f"C{number}", field_type=field_type, length=draw(st.integers(0, 20)),
            nullable=draw(st.booleans()), field_offset=draw(st.integers(0, 40)),
            precision=draw(st.one_of(st.none(), st.integers(0, 40))),
            scale=draw(st.one_of(st.none(), st.integers(0, 40))),
            compress_system_default=draw(st.booleans()),
        ))  # fmt: skip
    return rows.TableLayout(tuple(cols), 2, 10)


@st.composite
def any_images(draw, byteorder: str) -> bytes:
    """Random bytes, or a record header around random data (outer/inner types random)."""
    bo = _BO[byteorder]
    inner = bytes([draw(st.integers(0, 3)), 0]) + draw(st.binary(max_size=50))
    framed = handmade.image(bo, inner, draw(st.sampled_from([0, 0x10, 0x04, 0x02, 0x01])))
    return draw(st.one_of(st.binary(max_size=40), st.just(framed)))


@fuzz(400)
@given(any_layouts(), ORDERS, st.data())
def test_rows_on_any_bytes(layout, byteorder, draw):
    image = draw.draw(any_images(byteorder))
    decoded = decodes_or_rejects(rows.decode_row, image, layout, byteorder)
    if decoded is not None and decoded.record_kind == rows.USER_ROW:
        assert set(decoded.values) == {c.name for c in layout.columns}
    result = functions.decode_image(image, layout, functions.DEFAULT_SETTINGS, byteorder)
    assert result["error"] is not None or result["record_kind"] is not None


@st.composite
def fitting_images(draw, layout: rows.TableLayout, byteorder: str) -> bytes:
    """A formatted row laid out for ``layout`` (what the batch path takes): random values,
    null bytes 00/01 (rarely anything else), varying columns pointing into the variable data
    (rarely past it)."""
    bo = _BO[byteorder]
    width = max((c.field_offset + c.fixed_width + c.nullable for c in layout.columns), default=0)
    width += draw(st.integers(0, 3))
    fixed = bytearray(draw(st.binary(min_size=width, max_size=width)))
    variable = draw(st.binary(max_size=30))
    for column in layout.columns:
        end = column.field_offset + column.fixed_width
        if column.nullable:
            fixed[end] = draw(st.sampled_from([0, 0, 0, 1, 7]))
        if (column.varying or column.field_type in rows.LOB_TYPES) and column.fixed_width == 4:
            start = draw(st.integers(0, len(variable)))
            size = draw(st.integers(0, len(variable) - start + 2))
            fixed[column.field_offset : end] = struct.pack(bo + "HH", width + start, size)
    return handmade.formatted(bo, bytes(fixed), variable, draw(st.sampled_from([0, 0x10, 4])))


@st.composite
def fitting_compressed_images(draw, layout: rows.TableLayout, byteorder: str) -> bytes:
    """A VALUE COMPRESSION row with an offset entry per column of ``layout`` (what the batch
    path takes): attribute bytes NULL / system default (rarely another byte), 24-byte out-of-row
    descriptors, values of the column's width (rarely another), random bytes."""
    columns = []
    for column in layout.columns:
        varying = column.varying or column.field_type in rows.LOB_TYPES
        width = draw(st.integers(0, 12)) if varying else column.fixed_width
        if draw(st.integers(0, 9)) == 0:
            width = draw(st.integers(0, 30))
        value = (0, draw(st.binary(min_size=width, max_size=width)))
        attribute = (0x8000, draw(st.sampled_from([b"\x01", b"\x80", b"\x01", b"\x02", b""])))
        out_of_row = (0x8000, draw(st.binary(min_size=24, max_size=24)))
        columns.append(draw(st.sampled_from([value, value, attribute, out_of_row])))
    image = handmade.compressed(_BO[byteorder], columns, draw(st.sampled_from([0, 0x10, 4])))
    if draw(st.integers(0, 9)) == 0:  # cut short or with bytes after its last value
        image = image[: draw(st.integers(0, len(image)))] + draw(st.binary(max_size=3))
    return image


@fuzz(300)
@given(any_layouts(), ORDERS, st.data())
def test_images_decode_the_same_column_at_a_time_and_one_by_one(layout, byteorder, draw):
    """udfs/db2luw/batch_rows.py against decode_image on any bytes, nulls among them."""
    image = st.one_of(
        st.none(),
        any_images(byteorder),
        fitting_images(layout, byteorder),
        fitting_compressed_images(layout, byteorder),
    )
    images = draw.draw(st.lists(image, max_size=6))
    settings = functions.DEFAULT_SETTINGS
    batch = batch_rows.decode_images(pa.array(images, pa.binary()), layout, settings, byteorder)
    expected = [
        None if image is None else functions.decode_image(image, layout, settings, byteorder)
        for image in images
    ]
    assert batch.to_pylist() == expected


_LAYOUT_JSON = st.one_of(
    st.none(),
    st.text(max_size=30),
    any_layouts().map(lambda layout: functions.layout_to_json(layout, {})),
)


@fuzz(150)
@given(st.lists(st.tuples(st.binary(max_size=40), _LAYOUT_JSON, st.one_of(st.none(), ORDERS)),
                min_size=1, max_size=8))  # fmt: skip
def test_row_function_never_raises(items):
    result = functions.row_arrow(
        pa.array([i[0] for i in items], pa.binary()),
        pa.array([i[1] for i in items], pa.string()),
        pa.array([i[2] for i in items], pa.string()),
    )
    assert len(result) == len(items)


_DESCRIPTOR = st.fixed_dictionaries({
    "field_type": st.sampled_from(sorted(records.FIELD_TYPES)), "length": st.integers(0, 40),
    "precision": st.one_of(st.none(), st.integers(0, 31)),
    "scale": st.one_of(st.none(), st.integers(0, 31)), "nullable": st.booleans(),
    "compress_system_default": st.booleans(), "field_offset": st.integers(0, 100),
    "lob_length": st.none(), "lob_inline_length": st.none(),
})  # fmt: skip


@st.composite
def _layout_records(draw) -> dict:
    """A layout record as decode_record gives it (an alter column record holds one old and
    one new descriptor; add/drop/initialize records any number)."""
    kind = draw(st.sampled_from(sorted(rows.LAYOUT_KINDS)))
    count = (1, 1) if "alter_column" in kind else (0, 4)
    return {
        "lsn": draw(st.integers(0, 100)), "kind": kind, "table_space_identifier": 2,
        "table_identifier": 10,
        "old_columns": draw(st.lists(_DESCRIPTOR, min_size=count[0], max_size=count[1])),
        "new_columns": draw(st.lists(_DESCRIPTOR, min_size=count[0], max_size=count[1])),
        "column_id": draw(st.integers(0, 5)) if "alter_column" in kind else None,
    }  # fmt: skip


# The catalog argument is to_json(named_struct(...)) of the SQL model: null or an object.
_CATALOG = st.one_of(st.none(), st.fixed_dictionaries({
    "tabschema": st.just("S"), "tabname": st.just("T"), "tbspaceid": st.just(2),
    "tableid": st.just(10), "compression": st.one_of(st.none(), st.sampled_from("NVRB")),
    "columns": st.lists(st.fixed_dictionaries({
        "colname": st.sampled_from(["A", "B", "C"]), "colno": st.integers(0, 4),
        "typename": st.sampled_from([*sorted(rows.CATALOG_TYPES), "XYZ"]),
        "length": st.one_of(st.none(), st.integers(-1, 40)),
        "scale": st.one_of(st.none(), st.integers(0, 10)),
        "nulls": st.sampled_from(["Y", "N", ""]), "keyseq": st.one_of(st.none(), st.integers(0, 3)),
    }), max_size=4),
}).map(json.dumps))  # fmt: skip


@fuzz(200)
@given(_CATALOG, st.lists(_layout_records(), max_size=4))
def test_layout_history_never_raises(catalog, layout_records):
    found = functions.layout_history(catalog, json.dumps({}), layout_records)
    for version in found:
        assert (version["error"] is None) == (version["layout_json"] is not None)
    result = functions.layout_history_arrow(
        pa.array([catalog], pa.string()), pa.array(["{}"]), pa.array([layout_records])
    )
    assert len(result) == 1


# --- the catalog export ------------------------------------------------------------------------

_CSV_TEXT = st.text(st.sampled_from('abcXYZ019 ,"\n\r-;é\x00'), max_size=120)


@fuzz(200)
@given(st.sampled_from(["tables.csv", "columns.csv"]), st.booleans(),
       st.one_of(_CSV_TEXT.map(str.encode), st.binary(max_size=120)))  # fmt: skip
def test_catalog_exports_on_any_bytes(name, with_header, body):
    headers = {
        "tables.csv": b"TABSCHEMA,TABNAME,TBSPACEID,TABLEID,COMPRESSION\n",
        "columns.csv": b"TABSCHEMA,TABNAME,COLNAME,COLNO,TYPENAME,LENGTH,SCALE,NULLS\n",
    }
    folder = Path(tempfile.mkdtemp(prefix="logmart-fuzz-"))
    path = folder / name
    path.write_bytes((headers[name] if with_header else b"") + body)
    try:
        batch = readers.catalog_batch(path, "c", f"c/catalog/{name}")
        assert batch.num_rows <= body.count(b"\n") + body.count(b"\r") + 1
    finally:
        path.unlink()
        folder.rmdir()


# --- record bodies round-trip through the generator's builders ---------------------------------

_IMAGES = st.binary(max_size=40).map(lambda data: handmade.image("<", data))


@fuzz(200)
@given(
    st.lists(_IMAGES, min_size=1, max_size=4), st.lists(st.binary(min_size=6, max_size=6),
                                                         min_size=4, max_size=4),
    st.integers(0, 2**32 - 1), st.text(st.characters(codec="utf-8", exclude_characters=" \x00"),
                                       max_size=12),
    st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1),
)  # fmt: skip
def test_record_bodies_round_trip(images, rids, first_page, authid, ts, tid):
    bo, order = "<", "little"

    def decoded(body: bytes, rtype: int = 0x4E) -> dict:
        extension = bytes(24) if rtype == 0x43 else b""  # compensation + propagatable parts
        return records.decode_record(handmade.record(bo, body, rtype=rtype, extension=extension),
                                     order)  # fmt: skip

    image = images[0]
    insert = decoded(gen.insert_body(bo, 162, ts, tid, image, rids[0]))
    assert (insert["kind"], insert["after_image"], insert["rid"]) == ("row_insert", image,
                                                                      rids[0].hex())  # fmt: skip
    assert (insert["table_space_identifier"], insert["table_identifier"]) == (ts, tid)
    update = decoded(gen.update_body(bo, ts, tid, images[0], images[-1], rids[1]))
    assert (update["before_image"], update["after_image"]) == (images[0], images[-1])
    mdc = decoded(gen.empty_page_body(bo, 165, ts, tid, image, rids[2], first_page))
    assert (mdc["after_image"], mdc["first_page_of_the_block"]) == (image, first_page)
    many = decoded(gen.insert_multiple_body(bo, ts, tid, images, rids[: len(images)], 9))
    assert many["images"] == images and many["rids"] == [r.hex() for r in rids[: len(images)]]
    undo = decoded(gen.undo_insert_body(bo, ts, tid, rids[3], 10), rtype=0x43)
    assert (undo["kind"], undo["rid"]) == ("undo_insert", rids[3].hex())
    commit = decoded(gen.commit_body(bo, first_page, authid), rtype=0x84)
    stamp = dt.datetime.fromtimestamp(first_page, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert (commit["commit_time"], commit["authid"]) == (stamp, authid)
    assert decoded(gen.abort_body(bo, authid), rtype=0x41)["authid"] == authid
