"""Property tests of the Log Master decoders: control records, the LLDF header, row images.

(a) Random bytes: DecodeError or a value from the record decoders; the batch decoders and the
    SQL function body never raise and give one row out per row in, bad rows with a reason.
(b) Round trips with the generator's own builders (logmart_generators/logmaster.py places fields at
    the spec tables' hex offsets, independently of udfs/logmaster/layouts.py).
"""

from __future__ import annotations

import datetime as dt
import random
import struct

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from logmart_generators import logmaster as gen
from tests.fuzz.support import decodes_or_rejects, fuzz
from udfs import fields
from udfs.framing import FrameBatch
from udfs.logmaster import batch_records, catalog, control
from udfs.logmaster import rows as row_images
from udfs.logmaster.layouts import CONTROL_LAYOUTS

# --- control records -------------------------------------------------------------------------


@fuzz(300)
@given(st.binary(max_size=80), st.sampled_from(["cp037", "ascii", "cp500"]))
def test_control_records_on_any_bytes(body, codec):
    control.control_codec(body)
    found = decodes_or_rejects(control.decode_control_record, body, codec)
    if found is not None:
        record_type, fields_ = found
        assert record_type is not None and (fields_ is None or isinstance(fields_, dict))


@fuzz(300)
@given(st.sampled_from(list(CONTROL_LAYOUTS)), st.binary(max_size=760),
       st.sampled_from(["cp037", "ascii"]))  # fmt: skip
def test_known_control_record_types_with_any_body(record_type, rest, codec):
    body = record_type.encode(codec) + rest
    found = decodes_or_rejects(control.decode_control_record, body, codec)
    if found is not None:
        assert found[0] == record_type and isinstance(found[1], dict)


_GENERATOR_LAYOUTS = {
    "XTYP": (gen.XTYP, gen.XTYP_SIZE),
    "XHDF": (gen.XHDF, gen.XHDF_SIZE),
    "DLDS": (gen.DLDS, gen.DLDS_SIZE),
    "DLGE": (gen.DLGE, gen.DLGE_SIZE),
    "DTBI": (gen.DTBI, gen.DTBI_SIZE),
    "DLCI": (gen.DLCI, gen.DLCI_SIZE),
}
_TEXT = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 #@$_.-"


def _field_value(field, width: int):
    """(decoded value, strategy-drawn encoder) for one construct field type."""
    if isinstance(field, fields.UnicodeChar):
        chars = st.characters(codec="utf-8", exclude_characters="\x00 ")
        text = st.text(chars, max_size=width // 4)
        return text.map(lambda t: (t, t.encode("utf-8").ljust(width, b" ")))
    if isinstance(field, fields.CharNumber):
        high = 10**width - 1
        number = st.one_of(st.none(), st.integers(-(10 ** (width - 1)) + 1, high))
        return number.map(lambda n: (n, gen.char("", width) if n is None else gen.num(n, width)))
    if isinstance(field, fields.Timestamp17):
        moment = st.one_of(st.none(), st.datetimes(min_value=dt.datetime(1000, 1, 1)))
        return moment.map(lambda m: (
            None if m is None else m.strftime("%Y-%m-%d %H:%M:%S.") + f"{m.microsecond:06d}000000",
            gen.bin17(m)))  # fmt: skip
    if isinstance(field, fields.Hex):
        return st.binary(min_size=width, max_size=width).map(lambda b: (b.hex().upper(), b))
    if isinstance(field, fields.Char):
        text = st.text(_TEXT, max_size=width).map(str.rstrip)
        return text.map(lambda t: (t, gen.char(t, width)))
    raise AssertionError(field)


def _control_record(record_type: str):
    """A control record built at the generator's offsets, and what decoding must give."""
    layout = CONTROL_LAYOUTS[record_type]
    gen_layout, size = _GENERATOR_LAYOUTS[record_type]
    offsets = {name: offset for name, offset, _, _ in gen_layout}
    parts = []
    for sub in layout.subcons:
        field = sub.subcon if isinstance(sub.subcon, fields._Field) else sub.subcon.subcons[0]
        if sub.name == "CNTLRECORDTYPE" or isinstance(field, fields.Reserved):
            continue
        name = sub.name if sub.name in offsets else sub.name.removesuffix("CCSID")
        parts.append(_field_value(field, field.width).map(
            lambda pair, n=sub.name, at=offsets[name]: (n.lower(), at, *pair)))  # fmt: skip

    def build(values):
        raw = bytearray(
            gen.build_record(gen_layout, size, {"CNTLRECORDTYPE": gen.char(record_type, 4)})
        )
        for _, at, _, encoded in values:
            raw[at : at + len(encoded)] = encoded
        expected = {name: value for name, _, value, _ in values}
        return bytes(raw), {"cntlrecordtype": record_type, **expected}

    return st.tuples(*parts).map(build)


@fuzz(300)
@given(st.sampled_from(list(CONTROL_LAYOUTS)).flatmap(_control_record))
def test_control_records_round_trip(built):
    raw, expected = built
    record_type, decoded = control.decode_control_record(raw, "cp037")
    assert record_type == expected["cntlrecordtype"]
    assert decoded == expected


@fuzz(200)
@given(st.lists(st.fixed_dictionaries({
    "fieldname": st.one_of(st.sampled_from([s.name for s in control.DOCUMENTED_HEADER]),
                           st.text(max_size=18)),
    "fieldlength": st.one_of(st.none(), st.integers(-5, 300)),
    "fieldoffset": st.one_of(st.none(), st.integers(-5, 400)),
}), max_size=8))  # fmt: skip
def test_any_xhdf_records_give_a_usable_header_layout(xhdf):
    layout = control.header_layout_from_xhdf(xhdf)
    assert layout.fields or not xhdf
    assert all(spec.width > 0 and spec.offset >= 0 for spec in layout.fields)


# --- LLDF records (header batch decoding) ----------------------------------------------------


def _frame_batch(records: list[bytes]) -> FrameBatch:
    """RDW-framed records as the framing gives them (one chunk)."""
    buffer = b"".join(struct.pack(">HH", len(r) + 4, 0) + r for r in records)
    lengths = np.array([len(r) + 4 for r in records], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return FrameBatch(buffer, 1000, starts, lengths)


_XHDF_LAYOUTS = st.lists(
    st.fixed_dictionaries({
        "fieldname": st.sampled_from([s.name for s in control.DOCUMENTED_HEADER]),
        "fieldlength": st.integers(1, 20),
        "fieldoffset": st.integers(0, 300),
    }), min_size=1, max_size=6,
).map(control.header_layout_from_xhdf)  # fmt: skip


@fuzz(300)
@given(st.lists(st.binary(max_size=400), min_size=1, max_size=12),
       st.one_of(st.just(control.DOCUMENTED_LAYOUT), _XHDF_LAYOUTS),
       st.sampled_from(["cp037", "ascii"]))  # fmt: skip
def test_lldf_records_on_any_bytes(bodies, layout, codec):
    batch = _frame_batch(bodies)
    decoded = batch_records.decode_data_batch(batch, layout, codec, "x", "x/f")
    assert decoded.num_rows == len(bodies)
    rows = decoded.to_pylist()
    for row, body in zip(rows, bodies, strict=True):
        assert row["record_bytes"] == struct.pack(">HH", len(body) + 4, 0) + body
        if row["decode_error"] is None:
            start, length = row["data_offset"], row["data_length"]
            assert 4 + layout.width <= start and start + length <= len(row["record_bytes"])
        else:
            assert row["data_length"] == 0


def _lldf_header(values: dict[str, bytes]) -> bytes:
    return gen.build_record(gen.LLDF_LAYOUT, gen.LLDF_HEADER_SIZE, values)


@fuzz(200)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 0xFFFF), st.text(_TEXT, max_size=18).map(str.rstrip),
            st.sampled_from(["I", "D", "UB", "DM"]), st.binary(min_size=10, max_size=10),
            st.one_of(st.none(), st.datetimes(min_value=dt.datetime(1000, 1, 1))),
            st.binary(max_size=50), st.integers(1, 3),
        ),
        min_size=1, max_size=8,
    )
)  # fmt: skip
def test_lldf_headers_round_trip(changes):
    records, expected = [], []
    for dbid, name, change_type, lrsn, moment, payload, segments in changes:
        seglen = len(payload) if segments > 1 else 0
        header = _lldf_header({
            "LENGTH": gen.u16(gen.LLDF_HEADER_SIZE), "DBID": gen.u16(dbid),
            "TABLENAME": gen.char(name, 18), "CHANGE TYPE": gen.char(change_type, 2),
            "LOGLRSN": lrsn, "UORCOMMITTIMESTAMP": gen.bin17(moment), "SEGLEN": gen.u16(seglen),
            "TOTALSEGS": gen.u16(segments), "SEGNUM": gen.u16(1),
        })  # fmt: skip
        records.append(header + payload)
        stamp = None if moment is None else values_stamp(moment)
        expected.append({
            "decode_error": None, "length": 288, "dbid": dbid, "tablename": name,
            "change_type": change_type, "loglrsn": lrsn.hex().upper(),
            "uorcommittimestamp": stamp, "totalsegs": segments,
            "data_offset": 4 + 288, "data_length": len(payload),
        })  # fmt: skip
    decoded = batch_records.decode_data_batch(
        _frame_batch(records), control.DOCUMENTED_LAYOUT, "cp037", "x", "f"
    ).to_pylist()
    assert [{key: row[key] for key in expected[0]} for row in decoded] == expected


def values_stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond:06d}000000"


# --- row images ------------------------------------------------------------------------------

_TYPES = ["INT", "DEC", "FLOT", "DATE", "TIME", "DTTM", "DTTZ", "CHAR", "VCHR", "LVCH", "ROWI",
          "BLOB", "CLOB", "GRPH", "VGRF", "LVGR", "DBCL", "XYZ"]  # fmt: skip


@st.composite
def any_layouts(draw) -> row_images.RowLayout:
    columns = []
    for number in range(1, draw(st.integers(0, 6)) + 1):
        kind = draw(st.sampled_from(_TYPES))
        columns.append(row_images.Column(
            num=number, type=kind, length=draw(st.integers(0, 20)), scale=draw(st.integers(0, 9)),
            nulls=draw(st.sampled_from("NYL")), subtype=draw(st.sampled_from(["", "B"])),
            pos=draw(st.one_of(st.none(), st.integers(-1, 40))),
        ))  # fmt: skip
    return row_images.RowLayout(
        columns=tuple(columns),
        encoding=draw(st.sampled_from("EAU")),
        float_format=draw(st.sampled_from(["hfp", "ieee"])),
        lobs_included=draw(st.booleans()),
    )


def _data_fields():
    """Random DATA, or DATA framed right around random images (so the columns are reached)."""
    framed = st.lists(st.binary(max_size=40), min_size=1, max_size=2).map(
        lambda images: gen.data_field(*images)
    )
    return st.one_of(st.none(), st.binary(max_size=60), framed)


@fuzz(300)
@given(any_layouts(), st.lists(st.tuples(_data_fields(), st.sampled_from(
    ["I", "IL", "D", "UB", "DM", "CO", "", None])), min_size=1, max_size=10))  # fmt: skip
def test_row_images_on_any_bytes(layout, rows):
    datas, types = [d for d, _ in rows], [t for _, t in rows]
    try:
        decoded = row_images.decode_data(datas, types, layout)
    except row_images.values.DecodeError:  # a column the layout cannot describe
        assert any(c.type in ("XYZ", "INT", "FLOT") or (c.length <= 0 and not c.varying)
                   for c in layout.columns)  # fmt: skip
        return
    assert len(decoded.errors) == len(rows)
    for before, after, error, change_type in zip(decoded.before, decoded.after, decoded.errors,
                                                  types, strict=True):  # fmt: skip
        if error is not None:
            assert before is None and after is None
        elif (change_type or "").strip() in row_images.IMAGES_BY_CHANGE_TYPE:
            for image in (before, after):
                assert image is None or len(image) == len(layout.columns)
    # The SQL function body: never raises, one struct per row, the same answers.
    text = row_images.layout_text(layout)
    result = row_images.row_images_arrow(pa.array(datas, pa.binary()), pa.array(types, pa.string()),
                                       pa.array([text] * len(rows)))  # fmt: skip
    assert len(result) == len(rows)


@fuzz(100)
@given(st.lists(st.tuples(st.binary(max_size=30), st.sampled_from(["I", "UB", "D"]),
                          st.one_of(st.none(), st.text(max_size=60))), min_size=1, max_size=12))  # fmt: skip  # noqa: E501
def test_row_image_function_never_raises_on_any_layout_text(rows):
    result = row_images.row_images_arrow(
        pa.array([r[0] for r in rows], pa.binary()),
        pa.array([r[1] for r in rows], pa.string()),
        pa.array([r[2] for r in rows], pa.string()),
    )
    assert len(result) == len(rows)
    for row, out in zip(rows, result.to_pylist(), strict=True):
        assert out["error"] is not None or out["before_values"] or out["after_values"] or not row


def _generator_column(draw, encoding: str) -> gen.Col:
    kinds = ["INT", "DEC", "FLOT", "DATE", "TIME", "DTTM", "DTTZ", "CHAR", "VCHR", "LVCH", "ROWI",
             "BLOB", "CLOB"] + (["GRPH", "VGRF", "LVGR"] if encoding == "U" else [])  # fmt: skip
    kind = draw(st.sampled_from(kinds))
    null = draw(st.booleans())
    if kind == "INT":
        return gen.C("C", kind, draw(st.sampled_from([2, 4, 8])), null=null)
    if kind == "DEC":
        length = draw(st.integers(1, 8))
        return gen.C("C", kind, length, draw(st.integers(0, 2 * length - 1)), null=null)
    if kind == "FLOT":
        return gen.C("C", kind, draw(st.sampled_from([4, 8])), null=null)
    if kind in ("DATE", "TIME", "DTTM", "DTTZ"):
        return gen.C("C", kind, null=null)
    if kind == "CHAR":
        return gen.C("C", kind, draw(st.integers(1, 30)), null=null, bits=draw(st.booleans()))
    if kind == "GRPH":
        return gen.C("C", kind, 2 * draw(st.integers(1, 10)), null=null)
    length = {"VCHR": draw(st.integers(1, 120)), "LVCH": 9000, "ROWI": 40, "BLOB": 6000,
              "CLOB": 3000, "VGRF": 200, "LVGR": 2000}[kind]  # fmt: skip
    return gen.C("C", kind, length, null=null)


@st.composite
def generator_tables(draw) -> gen.Table:
    encoding = draw(st.sampled_from("EU"))
    columns = tuple(
        gen.Col(f"C{n}", *tuple(vars(c).values())[1:])
        for n, c in enumerate((_generator_column(draw, encoding)
                               for _ in range(draw(st.integers(1, 8)))), start=1)
    )  # fmt: skip
    return gen.Table("O", "T", "DB", "TS", 1, 2, 3, encoding, columns, lambda n: (n,))


@fuzz(150)
@given(generator_tables(), st.integers(0, 2**32), st.integers(1, 6))
def test_row_images_round_trip(table, seed, rows):
    rng = random.Random(seed)
    layout = row_images.RowLayout(
        columns=tuple(
            row_images.Column(number, c.type, c.length, c.scale, "Y" if c.nullable else "N",
                            "B" if c.bits else "")
            for number, c in enumerate(table.columns, start=1)
        ),
        encoding=table.encoding,
    )  # fmt: skip
    datas, types, expected = [], [], []
    for _ in range(rows):
        before = {c.name: gen.new_value(c, table, rng) for c in table.columns}
        after = {c.name: gen.new_value(c, table, rng) for c in table.columns}
        change_type = rng.choice(["I", "D", "UB"])
        images = {"I": [after], "D": [before], "UB": [before, after]}[change_type]
        datas.append(gen.data_field(*(gen.row_image(table, image) for image in images)))
        types.append(change_type)
        rendered = [list(gen.render_row(table, image).values()) for image in images]
        expected.append({"I": (None, rendered[0]), "D": (rendered[0], None),
                         "UB": tuple(rendered)}[change_type])  # fmt: skip
    decoded = row_images.decode_data(datas, types, layout)
    assert decoded.errors == [None] * rows
    assert list(zip(decoded.before, decoded.after, strict=True)) == expected


# --- catalog events (CO, CM, SC, E DATA) ------------------------------------------------------


@fuzz(200)
@given(st.lists(st.tuples(
    st.one_of(st.none(), st.binary(max_size=30), st.text(max_size=20).map(
        lambda t: gen.text_data(t.encode("cp037", "replace").decode("cp037")))),
    st.one_of(st.none(), st.sampled_from(["CO", "CM", "SC", "E", "I", " E "])),
    st.one_of(st.none(), st.sampled_from(["ccsid:37", "ccsid:500", "ccsid:x", "cp273", "hex"])),
), min_size=1, max_size=8))  # fmt: skip
def test_catalog_event_function_never_raises(items):
    result = catalog.catalog_event_arrow(
        pa.array([i[0] for i in items], pa.binary()),
        pa.array([i[1] for i in items], pa.string()),
        pa.array([i[2] for i in items], pa.string()),
    ).to_pylist()
    assert len(result) == len(items)
    for out in result:
        decoded = out["text"] is not None or out["clone_name"] is not None
        assert decoded != (out["error"] is not None)


@fuzz(200)
@given(st.text(_TEXT, max_size=80), st.text(_TEXT, max_size=8), st.text(_TEXT, max_size=18))
def test_catalog_events_round_trip(text, owner, name):
    assert catalog.catalog_event(gen.text_data(text), "CO", "cp037")["text"] == text
    clone = catalog.catalog_event(gen.exchange_data(owner, name), "E", "cp037")
    assert (clone["clone_owner"], clone["clone_name"], clone["error"]) == (owner, name, None)
