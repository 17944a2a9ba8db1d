"""The column-at-a-time Db2 LUW row image decoder (udfs/db2luw/batch_rows.py) against the
per-row one (functions.decode_image, i.e. rows.decode_row): the same values, null reasons,
unavailable reasons, record kinds and errors, on the generator's captures and on rows built by
hand at the spec's offsets for every column type."""

from __future__ import annotations

import struct
from collections import defaultdict
from decimal import Decimal

import pyarrow as pa
import pytest

from logmart_generators.db2luw import encode_decfloat, generate
from tests.db2luw import handmade as h
from tests.db2luw.replay import read_capture
from udfs.db2luw import batch_rows, functions
from udfs.db2luw import rows as r
from udfs.db2luw.rows import Column, LayoutBook, TableLayout, read_catalog

BYTE_ORDERS = ("little", "big")
SETTINGS = functions.DEFAULT_SETTINGS


def both(images: list[bytes | None], layout: TableLayout, byteorder: str, settings=SETTINGS):
    """Decode ``images`` both ways, check every field of every row agrees, return the rows."""
    fast = batch_rows.decode_images(pa.array(images, pa.binary()), layout, settings, byteorder)
    assert fast.type == functions.ROW_ARROW
    slow = [
        None if image is None else functions.decode_image(image, layout, settings, byteorder)
        for image in images
    ]
    got = fast.to_pylist()
    assert len(got) == len(slow)
    for row, (a, b) in enumerate(zip(got, slow, strict=True)):
        assert a == b, f"image {row}: batch {a} != per row {b}"
    return got


class Fallbacks:
    """Counts the images the batch path hands to the per-row decoder."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = batch_rows.decode_image

        def counted(*args):
            self.count += 1
            return real(*args)

        monkeypatch.setattr(batch_rows, "decode_image", counted)


# --- generated captures ----------------------------------------------------------------------


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_every_image_of_a_generated_capture_decodes_the_same_both_ways(
    byteorder, tmp_path, monkeypatch
):
    generate(tmp_path, 120, 3, byteorder=byteorder)
    (capture,) = sorted((tmp_path / "db2luw").iterdir())
    records = read_capture(capture, "filter", byteorder)
    book = LayoutBook(read_catalog(capture / "catalog"))
    for record in records:
        book.observe(record)
    by_layout: dict[TableLayout, list[bytes]] = defaultdict(list)
    for record in records:
        if not record.get("table_space_identifier"):
            continue
        layout = book.at(record["table_space_identifier"], record["table_identifier"],
                         record["lsn"])  # fmt: skip
        images = [record.get("before_image"), record.get("after_image")]
        for image in [*images, *(record.get("images") or [])]:
            if layout is not None and image is not None:
                by_layout[layout].append(image)
    fallbacks = Fallbacks(monkeypatch)
    decoded = []
    for layout, images in by_layout.items():
        decoded += both([*images, None], layout, byteorder)[:-1]
    types = {c.field_type for layout in by_layout for c in layout.columns}
    assert len(decoded) > 300
    assert {r.DECIMAL, r.TIMESTAMP, r.VARCHAR, r.GRAPHIC, r.CLOB, r.DATE} <= types
    compressed = {layout for layout in by_layout if layout.value_compression}
    assert compressed and all(by_layout[layout] for layout in compressed)
    # 'both' decodes each image per row too: count only the batch path's own hand-offs. Every
    # user row, formatted or VALUE COMPRESSION, takes the batch path; the hand-offs are the
    # images that are no row of their own (an update's half whose image is elsewhere, internal)
    not_rows = [row for row in decoded if row["record_kind"] != "user_row"]
    assert not_rows and fallbacks.count == len(not_rows)


def test_the_benchmark_table_takes_the_batch_path_only(tmp_path, monkeypatch):
    from logmart_generators.db2luw import generate_benchmark
    from udfs.db2luw import readers
    from udfs.framing import db2_read_log_length, db2_resync, frame_file

    log = tmp_path / "db2luw" / "bench" / "S0000000.log"
    generate_benchmark(log, 3000, seed=1)
    (layout,) = read_catalog(log.parent / "catalog").values()
    length, resync = db2_read_log_length("filter", "little"), db2_resync("filter", "little")
    images = []
    for frames in frame_file(log, length, 0, log.stat().st_size, resync=resync):
        for batch in readers.log_batch(frames, "c", "f", "filter", "little"):
            images += [i for i in batch.column("after_image").to_pylist() if i is not None]
    fallbacks = Fallbacks(monkeypatch)
    fast = batch_rows.decode_images(pa.array(images), layout, SETTINGS, "little").to_pylist()
    assert fallbacks.count == 0 and len(fast) == 3000
    assert fast[0]["values"][:2] == ["1", "name 0"]
    sample = [i for n, i in enumerate(images) if n % 97 == 0]
    got = both([None, *sample, None], layout, "little")  # decoded in place, nulls as nulls
    assert fallbacks.count == 0 and got[0] is None and got[1]["values"][0] == "1"
    # the raw load's option images on the same capture: one table, decoded in place
    table = read_source(tmp_path, images="true")
    inserts = table.filter(pa.compute.equal(table.column("kind"), "row_insert"))
    assert inserts.num_rows == 3000 and inserts.column("before_row").null_count == 3000
    assert inserts.column("after_row").to_pylist() == fast
    assert table.column("image_digest").null_count == table.num_rows - 3000  # the commits


# --- hand-built rows at the spec's offsets ------------------------------------------------------


def layout(*columns: Column) -> TableLayout:
    return TableLayout(columns=columns)


def fixed_row(bo: str, columns: list[tuple[Column, bytes | None]]) -> tuple[TableLayout, bytes]:
    """A formatted row (README: record header, inner type 1, fixed length, fixed section, then
    variable data) laid out by hand: each column's fixed portion at its field offset, then its
    null byte when nullable; varying and LOB columns point (offset, length) at the data."""
    placed, fixed, variable = [], b"", b""
    width = sum(_portion(c) + c.nullable for c, _ in columns)
    for column, value in columns:
        column = Column(**{**column.__dict__, "field_offset": len(fixed)})
        placed.append(column)
        if column.varying or column.field_type in r.LOB_TYPES:
            part = struct.pack(bo + "HH", width + len(variable), len(value or b""))
            variable += value or b""
        else:
            part = value if value is not None else bytes(_portion(column))
        fixed += part + (bytes([value is None]) if column.nullable else b"")
    return layout(*placed), h.formatted(bo, fixed, variable)


def _portion(column: Column) -> int:
    return column.fixed_width


def typed_columns(bo: str) -> list[tuple[Column, bytes | None, str | None]]:
    """(column, value bytes, expected text) for every column type, by hand."""
    return [
        (Column("SI", r.SMALLINT, 2, True, 0), struct.pack(bo + "h", -2), "-2"),
        (Column("I", r.INTEGER, 4, True, 0), struct.pack(bo + "i", 2**31 - 1), "2147483647"),
        (Column("BI", r.BIGINT, 8, True, 0), struct.pack(bo + "q", -(2**63)), str(-(2**63))),
        (Column("RE", r.REAL, 4, True, 0), struct.pack(bo + "f", 0.1), "0.1"),
        (Column("DO", r.DOUBLE, 8, True, 0), struct.pack(bo + "d", 1500.5), "1500.5"),
        (Column("DE", r.DECIMAL, 3, True, 0, precision=5, scale=2), b"\x00\x00\x1d", "-0.01"),
        (Column("DB", r.DECIMAL, 16, True, 0, precision=31, scale=3),
         bytes.fromhex("1234567890123456789012345678901c"), "1234567890123456789012345678.901"),
        (Column("D16", r.DECFLOAT64, 8, True, 0),
         encode_decfloat(Decimal("-123.450"), 8, bo), "-123.450"),
        (Column("D34", r.DECFLOAT128, 16, True, 0),
         encode_decfloat(Decimal("1E+10"), 16, bo), "1E+10"),
        (Column("CH", r.CHAR, 4, True, 0), b"ab  ", "ab  "),
        (Column("CB", r.CHAR, 2, True, 0, for_bit_data=True), b"\x00\xfe", "00FE"),
        (Column("GR", r.GRAPHIC, 4, True, 0), "日 ".encode("utf-16-be"), "日 "),
        (Column("BN", r.BINARY, 2, True, 0), b"\x0a\xff", "0AFF"),
        (Column("BO", r.BOOLEAN, 1, True, 0), b"\x01", "true"),
        (Column("BF", r.BOOLEAN, 1, True, 0), b"\x00", "false"),
        (Column("DA", r.DATE, 4, True, 0), bytes.fromhex("20240229"), "2024-02-29"),
        (Column("TI", r.TIME, 3, True, 0), bytes.fromhex("240000"), "24:00:00"),
        (Column("TS", r.TIMESTAMP, 10, True, 0), bytes.fromhex("20240301080000000001"),
         "2024-03-01 08:00:00.000001"),
        (Column("T0", r.TIMESTAMP, 7, True, 0), bytes.fromhex("19991231235959"),
         "1999-12-31 23:59:59"),
        (Column("VC", r.VARCHAR, 10, True, 0), "ü".encode(), "ü"),
        (Column("VE", r.VARCHAR, 10, True, 0), b"", ""),
        (Column("VX", r.VARCHAR, 10, True, 0, for_bit_data=True), b"\x01\x02", "0102"),
        (Column("VG", r.VARGRAPHIC, 10, True, 0), "é".encode("utf-16-be"), "é"),
        (Column("VB", r.VARBINARY, 10, True, 0), b"\x01", "01"),
        (Column("CL", r.CLOB, 0, True, 0), b"\x69\0\0\0hello", "hello"),
        (Column("BL", r.BLOB, 0, True, 0), b"\x80\x12", ""),
        (Column("DC", r.DBCLOB, 0, True, 0), b"\x69\0\0\0" + "ß".encode("utf-16-be"), "ß"),
        (Column("LN", r.CLOB, 0, True, 0), b"\x01" + bytes(23), None),  # a LOB descriptor
        (Column("XM", r.XML, 0, True, 0), b"<a/>", None),
        (Column("LV", r.LONG_VARCHAR, 0, True, 0), bytes(24), None),
    ]  # fmt: skip


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_every_column_type_by_hand(byteorder, monkeypatch):
    bo = h.order(byteorder)
    typed = typed_columns(bo)
    table, row = fixed_row(bo, [(c, v) for c, v, _ in typed])
    _, nulls = fixed_row(bo, [(c, None) for c, _, _ in typed])
    fallbacks = Fallbacks(monkeypatch)
    got = both([row, nulls, row], table, byteorder)
    assert fallbacks.count == 0
    assert got[0]["values"] == [text for _, _, text in typed]
    reasons = dict(zip([c.name for c in table.columns], got[0]["null_reasons"], strict=True))
    assert {n: w for n, w in reasons.items() if w} == {
        "LN": "lob_not_inline", "XM": "unsupported_type", "LV": "not_in_row"
    }  # fmt: skip
    unavailable = dict(zip([c.name for c in table.columns], got[0]["unavailable"], strict=True))
    assert {n: w for n, w in unavailable.items() if w} == {
        "LN": "not_logged_lob", "XM": "not_logged_xml", "LV": "not_logged_long"
    }  # fmt: skip
    assert got[1]["values"] == [None] * len(typed)
    assert set(got[1]["null_reasons"]) == {"null"} and set(got[1]["unavailable"]) == {None}
    assert (got[0]["record_kind"], got[0]["is_user_row"], got[0]["error"]) == ("user_row", True,
                                                                               None)  # fmt: skip


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_value_compression_rows_take_the_batch_path(byteorder, monkeypatch):
    """VALUE COMPRESSION (interpretation 11), laid out by hand: inner type 2 at byte 4, the
    number of columns at 6, then one u16 offset per column and one past the last, counted from
    the array's start (byte 8); 0x8000 marks an attribute byte (01 NULL, 80 system default) or
    a varying column's 24-byte out-of-row descriptor. Every column type's value is its bytes
    between two offsets."""
    bo = h.order(byteorder)
    typed = typed_columns(bo)
    table = layout(*[c for c, _, _ in typed])
    values = h.compressed(bo, [(0, v) for _, v, _ in typed])
    nulls = h.compressed(bo, [(0x8000, b"\x01")] * len(typed))
    defaults = h.compressed(bo, [(0x8000, b"\x80")] * len(typed))
    # By hand: SMALLINT -2, INTEGER NULL, BIGINT system default. Record header (outer type 0,
    # length 20), inner type 2 and 3 columns, offsets 8, 0x8000|10, 0x8000|11 and 12 from byte 8.
    small = layout(*[c for c, _, _ in typed[:3]])
    hand = {
        "little": "0000 1400 0200 0300 0800 0a80 0b80 0c00 feff 0180",
        "big": "0000 0014 0200 0003 0008 800a 800b 000c fffe 0180",
    }
    by_hand = bytes.fromhex(hand[byteorder])
    fallbacks = Fallbacks(monkeypatch)
    got = both([values, nulls, None, defaults, values], table, byteorder)
    assert fallbacks.count == 0
    assert got[0]["values"] == [text for _, _, text in typed] == got[4]["values"]
    assert (got[0]["record_kind"], got[0]["error"], got[2]) == ("user_row", None, None)
    assert set(got[1]["null_reasons"]) == {"null"} and got[1]["values"] == [None] * len(typed)
    names = [c.name for c in table.columns]
    default = dict(zip(names, got[3]["values"], strict=True))
    assert (default["SI"], default["DE"], default["CH"], default["BN"]) == ("0", "0.00", "    ",
                                                                           "0000")  # fmt: skip
    assert (default["BO"], default["VC"], default["DA"]) == ("false", "", None)
    assert dict(zip(names, got[3]["unavailable"], strict=True))["DA"] == "default_not_logged"
    got = both([by_hand], small, byteorder)
    assert got[0]["values"] == ["-2", None, "0"] and fallbacks.count == 0
    assert got[0]["null_reasons"] == [None, "null", None]


def test_out_of_row_varying_data_and_record_types(monkeypatch):
    table = layout(Column("ID", r.SMALLINT, 2, False, 0), Column("NOTE", r.VARCHAR, 900, True, 2))
    out_of_row = h.formatted("<", struct.pack("<hHH", 1, 0x8000 | 7, 24) + b"\x00", bytes(24))
    body = struct.pack("<BBH", 1, 0, 7) + struct.pack("<hHH", 9, 7, 2) + b"\x00" + b"ok"
    carries_update = h.image("<", body, outer=0x04)
    fallbacks = Fallbacks(monkeypatch)
    got = both([out_of_row, carries_update, h.image("<", body, outer=0x10)], table, "little")
    assert fallbacks.count == 0
    assert got[0]["values"] == ["1", None] and got[0]["null_reasons"] == [None, "out_of_row"]
    assert got[0]["unavailable"] == [None, "not_logged_out_of_row"]
    assert got[1]["values"] == ["9", "ok"] and got[1]["record_type"] == 0x04
    assert got[2]["record_type"] == 0x10


def test_images_the_batch_path_leaves_to_the_row_decoder(monkeypatch):
    """Each of these goes through decode_image: the result (error, reason, kind) is its own."""
    table = layout(
        Column("ID", r.SMALLINT, 2, True, 0),
        Column("D", r.DATE, 4, True, 3),
        Column("V", r.VARCHAR, 9, True, 8),
        Column("B", r.BOOLEAN, 1, True, 13),
    )

    def row(null: int = 0, date: bytes = bytes.fromhex("20240101"), boolean: bytes = b"\x01",
            text: bytes = b"abc", length: int | None = None) -> bytes:  # fmt: skip
        fixed = (struct.pack("<h", 7) + bytes([null]) + date + b"\x00"
                 + struct.pack("<HH", 15, len(text) if length is None else length) + b"\x00"
                 + boolean + b"\x00")  # fmt: skip
        return h.formatted("<", fixed, text)

    good = row()
    cases = [
        row(null=7),  # null byte neither 00 nor 01: a row error
        row(date=bytes.fromhex("20240230")),  # no such day: undecodable value
        row(date=bytes.fromhex("2024ab01")),  # not digits
        row(boolean=b"\x02"),  # BOOLEAN not 00/01
        row(text=b"\xff\xfe"),  # not UTF-8
        row(length=40),  # variable data past the row's end: a row error
        h.formatted("<", struct.pack("<h", 5) + b"\x00"),  # written before D, V, B were added
        h.compressed("<", [(0, b"\x05\x00"), (0x8000, b"\x01")]),  # VALUE COMPRESSION, 2 of 4
        h.image("<", struct.pack("<BBH", 0, 0, 0)),  # internal record
        h.image("<", struct.pack("<BBH", 1, 0, 0), outer=0x02),  # image elsewhere
        b"\x00\x00\x09\x00",  # the header says 9 bytes
        b"\x00",  # no record header
    ]
    fallbacks = Fallbacks(monkeypatch)
    got = both([good, *cases, None, good], table, "little")
    assert fallbacks.count == len(cases)
    assert got[0]["values"] == ["7", "2024-01-01", "abc", "true"] == got[-1]["values"]
    assert "null byte of column ID is 0x07" in got[1]["error"]
    assert got[2]["null_reasons"][1].startswith("undecodable")
    assert got[2]["unavailable"][1] == "undecodable"
    assert "runs past" in got[6]["error"]
    assert got[7]["unavailable"][1:] == ["added_after_row"] * 3
    assert [got[n]["record_kind"] for n in (9, 10)] == ["internal", "image_elsewhere"]
    assert "no 4-byte record header" in got[12]["error"] and got[13] is None


def test_other_code_pages_and_a_layout_without_columns():
    table = layout(Column("C", r.CHAR, 3, False, 0), Column("V", r.VARCHAR, 9, False, 3))
    fixed = "äb ".encode("cp1252") + struct.pack("<HH", 7, 2)
    settings = {"codec": "cp1252", "graphic_codec": "utf-16-le"}
    got = both([h.formatted("<", fixed, "é!".encode("cp1252"))], table, "little", settings)
    assert got[0]["values"] == ["äb ", "é!"]
    empty = both([h.formatted("<", b"")], layout(), "little")
    assert empty[0]["values"] == [] and empty[0]["record_kind"] == "user_row"
    # an unknown field type of length 0 (the fuzzer's): no value, unsupported_type
    unknown = layout(Column("U", 2457, 0, False, 0), Column("ID", r.SMALLINT, 2, False, 0))
    got = both([h.formatted("<", b"\x05\x00"), b"", None], unknown, "little")
    assert got[0]["values"] == [None, "5"] and got[0]["null_reasons"] == ["unsupported_type", None]
    assert got[1]["error"] and got[2] is None


def test_the_row_udf_decodes_by_layout_and_keeps_the_input_order():
    one = layout(Column("ID", r.SMALLINT, 2, False, 0))
    two = layout(Column("ID", r.INTEGER, 4, False, 0))
    images = [h.formatted("<", struct.pack("<h", 1)), h.formatted(">", struct.pack(">i", 2)),
              None, h.formatted("<", struct.pack("<h", 3)), h.formatted("<", b"\x01")]  # fmt: skip
    texts = [functions.layout_to_json(one, {}), functions.layout_to_json(two, {}), None,
             functions.layout_to_json(one, {}), None]  # fmt: skip
    out = functions.row_arrow(
        pa.array(images, pa.binary()), pa.array(texts), pa.array(["little", "big", None,
                                                                  "little", "little"])
    ).to_pylist()  # fmt: skip
    assert [o and o["values"] for o in out] == [["1"], ["2"], None, ["3"], None]
    assert out[4]["error"] == "no table layout for this table at this LSN"


# --- the data source's option images ----------------------------------------------------------


def read_source(root, **options) -> pa.Table:
    from udfs.db2luw.source import Db2LuwReader

    reader = Db2LuwReader({"path": str(root / "db2luw"), "raw_root": str(root), **options})
    return pa.Table.from_batches(
        [batch for part in reader.partitions() for batch in reader.read(part)]
    )


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_the_data_source_decodes_images_with_the_catalog_layout(byteorder, tmp_path):
    generate(tmp_path, 80, 4, byteorder=byteorder)
    plain = read_source(tmp_path, byteorder=byteorder)
    table = read_source(tmp_path, byteorder=byteorder, images="true")
    assert table.schema.names == [*plain.schema.names, "image_digest", "before_row", "after_row"]
    assert table.select(plain.schema.names).equals(plain)  # the records are untouched
    (capture,) = sorted((tmp_path / "db2luw").iterdir())
    decodings = batch_rows.catalog_decodings(read_catalog(capture / "catalog"), SETTINGS, byteorder)
    decoded = 0
    for row in table.to_pylist():
        ids = (row["table_space_identifier"], row["table_identifier"])
        if row["image_digest"] is None:
            has_image = row["before_image"] is not None or row["after_image"] is not None
            assert row["decode_error"] or row["images"] or not has_image or ids not in decodings
            assert row["before_row"] is None and row["after_row"] is None
            continue
        layout, digest = decodings[ids]
        assert row["image_digest"] == digest
        assert digest == batch_rows.image_digest(functions.layout_to_json(layout, {}), byteorder)
        for side in ("before", "after"):
            image = row[f"{side}_image"]
            expected = None
            if image is not None:
                expected = functions.decode_image(image, layout, SETTINGS, byteorder)
            assert row[f"{side}_row"] == expected
        decoded += 1
    assert decoded > 200
    assert table.column("images").null_count < table.num_rows  # insert multiple: left to the UDF


def test_option_images_is_checked_and_needs_a_catalog(tmp_path):
    from udfs.db2luw.source import Db2LuwDataSource

    generate(tmp_path, 10, 4)
    for catalog_file in tmp_path.glob("db2luw/*/catalog/*.csv"):
        catalog_file.unlink()
    table = read_source(tmp_path, images="true")
    assert table.num_rows > 10 and table.column("image_digest").null_count == table.num_rows
    with pytest.raises(ValueError, match="option images must be 'true' or 'false'"):
        Db2LuwDataSource({"path": str(tmp_path), "images": "yes"}).schema()
    with pytest.raises(ValueError, match="needs records=log"):
        Db2LuwDataSource({"path": str(tmp_path), "images": "true", "records": "frames"}).schema()
