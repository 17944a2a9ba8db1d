"""decode_row: formatted user data with and without VALUE COMPRESSION, every column type, null
reasons, layouts from descriptors, the catalog and ALTER records."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from logmart_generators.db2luw import encode_decfloat
from tests.db2luw import handmade as h
from udfs.db2luw import functions
from udfs.db2luw import rows as r
from udfs.db2luw.records import decode_record
from udfs.db2luw.rows import Column, LayoutBook, TableLayout, decode_row, read_catalog
from udfs.errors import DecodeError
from udfs.values import decfloat_dpd, packed_date, packed_time, packed_timestamp


def _message_id(value) -> str | None:
    """Name error cases after the message they expect, not after their bytes."""
    return "-".join(value.split()[:4]) if isinstance(value, str) else "bytes"


BYTE_ORDERS = ("little", "big")


def layout(*columns: Column) -> TableLayout:
    return TableLayout(columns=columns)


def test_packed_date_time_timestamp_from_the_spec():
    assert packed_date(bytes.fromhex("19960403")) == "1996-04-03"
    assert packed_time(bytes.fromhex("133200")) == "13:32:00"
    assert packed_timestamp(bytes.fromhex("19960403133200123456")) == "1996-04-03 13:32:00.123456"
    with pytest.raises(DecodeError):
        packed_date(bytes.fromhex("19961303"))


@pytest.mark.parametrize(
    ("value", "size"),
    [("0", 8), ("-0.001", 8), ("9.999999999999999E+384", 8), ("1E-398", 8), ("1.50", 16),
     ("-1234567890123456789012345678901234E+6111", 16)],
)  # fmt: skip
def test_decfloat_dpd_round_trips_the_generators_encoder(value, size):
    for byteorder in BYTE_ORDERS:
        raw = encode_decfloat(Decimal(value), size, h.order(byteorder))
        assert decfloat_dpd(raw, byteorder) == str(Decimal(value))


def test_decfloat_specials():
    assert decfloat_dpd(bytes.fromhex("7800000000000000")) == "Infinity"
    assert decfloat_dpd(bytes.fromhex("f800000000000000")) == "-Infinity"
    assert decfloat_dpd(bytes.fromhex("7c00000000000000")) == "NaN"
    assert decfloat_dpd(bytes.fromhex("7e00000000000000")) == "sNaN"
    assert decfloat_dpd(bytes.fromhex("77fcff3fcff3fcff")) == "9.999999999999999E+384"


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_fixed_columns_null_byte_and_variable_data(byteorder):
    bo = h.order(byteorder)
    table = layout(
        Column("ID", r.INTEGER, 4, False, 0),
        Column("NAME", r.VARCHAR, 20, True, 4),  # 4-byte fixed portion + null byte
        Column("BORN", r.DATE, 4, True, 9),
        Column("AT", r.TIME, 3, True, 14),
        Column("PRICE", r.DECIMAL, 4, True, 18, precision=7, scale=2),
    )
    fixed = (struct.pack(bo + "i", -7) + struct.pack(bo + "HH", 23, 5) + b"\x00"
             + bytes.fromhex("19960403") + b"\x00" + bytes.fromhex("133200") + b"\x01"
             + bytes.fromhex("0012345d") + b"\x00")  # fmt: skip
    assert len(fixed) == 23
    row = decode_row(h.formatted(bo, fixed, b"hello"), table, byteorder)
    assert row.values == {"ID": "-7", "NAME": "hello", "BORN": "1996-04-03", "AT": None,
                          "PRICE": "-123.45"}  # fmt: skip
    assert row.none_sources == {"AT": "null"}
    assert (row.record_kind, row.format) == ("user_row", "formatted")


def test_out_of_row_varchar_is_flagged_not_decoded():
    table = layout(Column("ID", r.SMALLINT, 2, False, 0), Column("NOTE", r.VARCHAR, 900, True, 2))
    fixed = struct.pack("<hHH", 1, 0x8000 | 7, 24) + b"\x00"
    row = decode_row(h.formatted("<", fixed, bytes(24)), table)
    assert row.values == {"ID": "1", "NOTE": None}
    assert row.none_sources == {"NOTE": "out_of_row"}


def test_column_added_after_the_row_was_written_is_not_in_row():
    table = layout(Column("ID", r.SMALLINT, 2, False, 0), Column("TIER", r.CHAR, 1, True, 2))
    row = decode_row(h.formatted("<", struct.pack("<h", 5)), table)
    assert row.values == {"ID": "5", "TIER": None} and row.none_sources == {"TIER": "not_in_row"}


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_value_compression_with_null_and_system_default(byteorder):
    bo = h.order(byteorder)
    table = layout(
        Column("ID", r.BIGINT, 8, False, 0),
        Column("QTY", r.INTEGER, 4, False, 0, compress_system_default=True),
        Column("NOTE", r.VARCHAR, 40, True, 0, compress_system_default=True),
        Column("STATUS", r.CHAR, 3, False, 0, compress_system_default=True),
        Column("AMOUNT", r.DECIMAL, 6, True, 0, precision=11, scale=2),
        Column("ORDERED", r.DATE, 4, True, 0, compress_system_default=True),
        Column("NAME", r.VARCHAR, 40, True, 0),
    )
    data = h.compressed(bo, [
        (0, struct.pack(bo + "q", 42)), (0x8000, b"\x80"), (0x8000, b"\x01"), (0x8000, b"\x80"),
        (0x8000, b"\x80"), (0x8000, b"\x80"), (0, "Zürich".encode()),
    ])  # fmt: skip
    row = decode_row(data, table, byteorder)
    assert row.values == {"ID": "42", "QTY": "0", "NOTE": None, "STATUS": "   ",
                          "AMOUNT": "0.00", "ORDERED": None, "NAME": "Zürich"}  # fmt: skip
    assert row.none_sources == {"NOTE": "null", "ORDERED": "system_default_unknown"}
    assert row.format == "value_compression"


def test_value_compression_offsets_count_from_the_offset_array():
    """Interpretation 11, by hand: 2 columns -> 3 entries (6 bytes), data starts at 6."""
    table = layout(Column("A", r.SMALLINT, 2, False, 0), Column("B", r.VARCHAR, 9, False, 0))
    body = struct.pack("<BBH", 2, 0, 2) + struct.pack("<3H", 6, 8, 11) + b"\x05\x00abc"
    assert decode_row(h.image("<", body), table).values == {"A": "5", "B": "abc"}


def test_value_compression_out_of_row_and_missing_columns():
    table = layout(Column("NOTE", r.VARCHAR, 900, True, 0), Column("X", r.INTEGER, 4, True, 0),
                   Column("LATE", r.INTEGER, 4, True, 0))  # fmt: skip
    data = h.compressed("<", [(0x8000, bytes(24)), (0, struct.pack("<i", 3))])
    row = decode_row(data, table)
    assert row.values == {"NOTE": None, "X": "3", "LATE": None}
    assert row.none_sources == {"NOTE": "out_of_row", "LATE": "not_in_row"}
    with pytest.raises(DecodeError, match="attribute byte"):
        decode_row(h.compressed("<", [(0x8000, b"\x33"), (0, b"")]), table)


def test_inline_lobs():
    table = layout(Column("C", r.CLOB, 0, True, 0), Column("B", r.BLOB, 0, True, 5),
                   Column("E", r.CLOB, 0, True, 10), Column("D", r.CLOB, 0, True, 15))  # fmt: skip
    variable = [b"\x69\x00\x05\x00" + b"hello", b"\x69\x00\x02\x00" + b"\xab\xcd", b"\x80",
                b"\x01" + bytes(23)]  # fmt: skip
    fixed, at = b"", 20
    for part in variable:
        fixed += struct.pack("<HH", at, len(part)) + b"\x00"
        at += len(part)
    row = decode_row(h.formatted("<", fixed, b"".join(variable)), table)
    assert row.values == {"C": "hello", "B": "ABCD", "E": "", "D": None}
    assert row.none_sources == {"D": "lob_not_inline"}


@pytest.mark.parametrize(
    "value",
    [b"\x80", b"\x80\x00\x00\x00", b"\x80\x12\x34\x56\x78", b"\x80" + bytes(23)],
)
def test_inline_lob_first_byte_0x80_is_empty_whatever_follows(value):
    # 002_… "Extracting inlined LOB data": "If the first byte is 0x80, the LOB data is an empty
    # string." Hand-built: CLOB, BLOB and DBCLOB each point (offset, length) at the same bytes.
    table = layout(Column("C", r.CLOB, 0, True, 0), Column("B", r.BLOB, 0, True, 5),
                   Column("G", r.DBCLOB, 0, True, 10))  # fmt: skip
    fixed = b"".join(struct.pack("<HH", 15, len(value)) + b"\x00" for _ in range(3))
    row = decode_row(h.formatted("<", fixed, value), table)
    assert row.values == {"C": "", "B": "", "G": ""}
    assert row.none_sources == {}


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_every_column_type(byteorder):
    bo = h.order(byteorder)
    ints = [
        (Column("SI", r.SMALLINT, 2, False, 0), struct.pack(bo + "h", -2), "-2"),
        (Column("I", r.INTEGER, 4, False, 0), struct.pack(bo + "i", 2**31 - 1), "2147483647"),
        (Column("BI", r.BIGINT, 8, False, 0), struct.pack(bo + "q", -(2**63)), str(-(2**63))),
        (Column("RE", r.REAL, 4, False, 0), struct.pack(bo + "f", 0.1), "0.1"),
        (Column("DO", r.DOUBLE, 8, False, 0), struct.pack(bo + "d", 1500.5), "1500.5"),
    ]
    others = [
        (Column("DE", r.DECIMAL, 3, False, 0, precision=5, scale=2), b"\x00\x00\x1c", "0.01"),
        (Column("D16", r.DECFLOAT64, 8, False, 0),
         encode_decfloat(Decimal("-123.450"), 8, bo), "-123.450"),
        (Column("D34", r.DECFLOAT128, 16, False, 0),
         encode_decfloat(Decimal("1234567890123456789012345678901234"), 16, bo),
         "1234567890123456789012345678901234"),
        (Column("CH", r.CHAR, 4, False, 0), b"ab  ", "ab  "),
        (Column("GR", r.GRAPHIC, 4, False, 0), "日 ".encode("utf-16-be"), "日 "),
        (Column("BN", r.BINARY, 2, False, 0), b"\x0a\xff", "0AFF"),
        (Column("BO", r.BOOLEAN, 1, False, 0), b"\x01", "true"),
        (Column("DA", r.DATE, 4, False, 0), bytes.fromhex("20240229"), "2024-02-29"),
        (Column("TI", r.TIME, 3, False, 0), bytes.fromhex("235959"), "23:59:59"),
        (Column("TS", r.TIMESTAMP, 10, False, 0), bytes.fromhex("20240301080000000001"),
         "2024-03-01 08:00:00.000001"),
        (Column("VC", r.VARCHAR, 10, False, 0), "ü".encode(), "ü"),
        (Column("VG", r.VARGRAPHIC, 10, False, 0), "é".encode("utf-16-be"), "é"),
        (Column("VB", r.VARBINARY, 10, False, 0), b"\x01", "01"),
        (Column("DB", r.DBCLOB, 0, False, 0), b"\x69\0\0\0" + "ß".encode("utf-16-be"), "ß"),
        (Column("XM", r.XML, 0, False, 0), b"<a/>", None),
        (Column("LV", r.LONG_VARCHAR, 0, False, 0), bytes(24), None),
    ]  # fmt: skip
    columns = tuple(c for c, _, _ in ints + others)
    row = decode_row(h.compressed(bo, [(0, raw) for _, raw, _ in ints + others]),
                     layout(*columns), byteorder)  # fmt: skip
    assert row.values == {c.name: text for c, _, text in ints + others}
    assert row.none_sources == {"XM": "unsupported_type", "LV": "not_in_row"}


def test_undecodable_value_is_a_reasoned_null_not_an_error():
    table = layout(Column("D", r.DATE, 4, False, 0), Column("B", r.BOOLEAN, 1, False, 0))
    row = decode_row(h.compressed("<", [(0, bytes.fromhex("2024ab01")), (0, b"\x07")]), table)
    assert row.values == {"D": None, "B": None}
    assert row.none_sources["D"].startswith("undecodable: packed digits")
    assert row.none_sources["B"].startswith("undecodable: BOOLEAN")


@pytest.mark.parametrize(
    ("outer", "inner", "kind"),
    [(0x00, 0x00, "internal"), (0x10, 0x01, "user_row"), (0x04, 0x01, "user_row"),
     (0x04, 0x00, "internal"), (0x02, 0x01, "image_elsewhere"), (0x01, 0x01, "not_user_record")],
)  # fmt: skip
def test_record_types(outer, inner, kind):
    table = layout(Column("ID", r.SMALLINT, 2, False, 0))
    data = h.image("<", struct.pack("<BBH", inner, 0, 2) + b"\x01\x00", outer)
    row = decode_row(data, table)
    assert (row.record_kind, row.record_type) == (kind, outer)
    assert row.values == ({"ID": "1"} if kind == "user_row" else {})


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"\x00\x00", "no 4-byte record header"),
     (h.formatted("<", b"\x01\x00")[:-1] + b"", "says 10 bytes"),
     (h.formatted("<", b"\x01\x00\x07"), "null byte of column ID"),
     (h.image("<", struct.pack("<BBH", 1, 0, 50)), "runs past")],
    ids=_message_id,
)  # fmt: skip
def test_row_errors(data, message):
    table = layout(Column("ID", r.SMALLINT, 2, True, 0))
    with pytest.raises(DecodeError, match=message):
        decode_row(data, table)


def test_real_db2_record_image_decodes_with_a_descriptor_layout():
    image = decode_record(h.REAL_RECORD)["after_image"]
    table = layout(Column("K", r.INTEGER, 4, False, 0), Column("V", r.VARCHAR, 300, True, 4))
    row = decode_row(image, table)
    assert row.values == {"K": "0", "V": ""}  # zero-filled data: offset 0, length 0
    assert row.none_sources == {}


# --- layouts -------------------------------------------------------------------------------------


def catalog(tmp_path, columns: str, tables: str = "") -> dict:
    (tmp_path / "tables.csv").write_text(
        "TABSCHEMA,TABNAME,TBSPACEID,TABLEID,COMPRESSION\n" + (tables or "S,T,2,7,N\n")
    )
    (tmp_path / "columns.csv").write_text(
        "TABSCHEMA,TABNAME,COLNAME,COLNO,TYPENAME,LENGTH,SCALE,NULLS,KEYSEQ\n" + columns
    )
    return read_catalog(tmp_path)


def test_catalog_layout_interpretation_12(tmp_path):
    layouts = catalog(tmp_path, "\n".join([
        "S,T,NAME,1,VARCHAR,20,0,Y,", "S,T,ID,0,INTEGER,4,0,N,1", "S,T,AMT,2,DECIMAL,9,2,Y,",
        "S,T,G,3,GRAPHIC,3,0,N,", "S,T,TS,4,TIMESTAMP,10,6,Y,", "S,T,D,5,DECFLOAT,16,0,Y,",
    ]) + "\n")  # fmt: skip
    t = layouts[(2, 7)]
    assert (t.schema, t.name, t.key_columns, t.value_compression) == ("S", "T", ("ID",), False)
    got = [(c.name, c.type_name, c.length, c.field_offset, c.nullable) for c in t.columns]
    assert got == [
        ("ID", "INTEGER", 4, 0, False),
        ("NAME", "VARCHAR", 20, 4, True),
        ("AMT", "DECIMAL", 5, 9, True),
        ("G", "GRAPHIC", 6, 15, False),
        ("TS", "TIMESTAMP", 10, 21, True),
        ("D", "DECFLOAT128", 16, 32, True),
    ]


def test_catalog_codepage_0_columns_are_binary_not_text(tmp_path):
    """Issue 14 item 7: SYSCAT.COLUMNS CODEPAGE 0 = FOR BIT DATA. Hand-built row: CHAR(4) and
    VARCHAR(8) FOR BIT DATA, then a CHAR(2) text column (CODEPAGE 1208)."""
    (tmp_path / "tables.csv").write_text("TABSCHEMA,TABNAME,TBSPACEID,TABLEID\nS,T,2,7\n")
    (tmp_path / "columns.csv").write_text(
        "TABSCHEMA,TABNAME,COLNAME,COLNO,TYPENAME,LENGTH,SCALE,NULLS,CODEPAGE\n"
        "S,T,TAG,0,CHARACTER,4,0,N,0\nS,T,HASH,1,VARCHAR,8,0,N,0\nS,T,CC,2,CHARACTER,2,0,N,1208\n"
    )
    t = read_catalog(tmp_path)[(2, 7)]
    assert [c.for_bit_data for c in t.columns] == [True, True, False]
    # fixed section: TAG at 0 (4 bytes), HASH (offset, length) at 4, CC at 8; data after it
    fixed = b"\xc1\x00\xff\x41" + struct.pack("<HH", 10, 3) + b"ab"
    row = decode_row(h.formatted("<", fixed, b"\x0e\x0f\x80"), t)
    assert row.values == {"TAG": "C100FF41", "HASH": "0E0F80", "CC": "ab"}
    assert functions.column_type(t.columns[0]) == "CHAR(4) FOR BIT DATA"
    assert functions.column_type(t.columns[2]) == "CHAR(2)"


def test_catalog_errors_say_what_to_fix(tmp_path):
    with pytest.raises(DecodeError, match="not known"):
        catalog(tmp_path, "S,T,X,0,MYTYPE,4,0,N,\n")
    (tmp_path / "columns.csv").write_text("TABSCHEMA,TABNAME\n")
    with pytest.raises(DecodeError, match="header row"):
        read_catalog(tmp_path)


def descriptor(field_type, length, nullable, offset, **extra) -> dict:
    return {"field_type": field_type, "length": length, "nullable": nullable,
            "field_offset": offset, "precision": None, "scale": None,
            "compress_system_default": False, **extra}  # fmt: skip


def test_layout_book_follows_add_and_drop_columns(tmp_path):
    layouts = catalog(tmp_path, "S,T,ID,0,INTEGER,4,0,N,1\nS,T,NAME,1,VARCHAR,20,0,Y,\n"
                      "S,T,TIER,2,CHARACTER,1,0,Y,\n")  # fmt: skip
    book = LayoutBook(layouts)
    old = [descriptor(1, 4, False, 0), descriptor(0x101, 20, True, 4)]
    new = [*old, descriptor(0x100, 1, True, 9)]
    add = {"kind": "ddl_add_columns", "table_space_identifier": 2, "table_identifier": 7,
           "lsn": 100, "old_columns": old, "new_columns": new}  # fmt: skip
    book.observe(add)
    assert [c.name for c in book.at(2, 7, 50).columns] == ["ID", "NAME"]
    assert [c.name for c in book.at(2, 7, 100).columns] == ["ID", "NAME", "TIER"]
    drop = {**add, "kind": "ddl_drop_columns", "lsn": 200, "old_columns": new,
            "new_columns": [old[0], descriptor(0x100, 1, True, 4)]}  # fmt: skip
    book.observe(drop)
    assert [c.name for c in book.at(2, 7, 250).columns] == ["ID", "TIER"]
    alter = {**add, "kind": "ddl_alter_column", "lsn": 300, "column_id": 1,
             "new_columns": [descriptor(0x100, 2, True, 4)]}  # fmt: skip
    book.observe(alter)
    assert (
        book.at(2, 7, 300).columns[1].length == 2 and book.at(2, 7, 300).columns[1].name == "TIER"
    )
    assert book.at(9, 9, 1) is None


def test_initialize_table_layout_without_catalog_names_columns_c1_to_cn():
    book = LayoutBook()
    book.observe(
        {
            "kind": "ddl_initialize_table",
            "table_space_identifier": 2,
            "table_identifier": 14,
            "lsn": 10,
            "new_columns": [descriptor(1, 4, False, 0), descriptor(0x101, 9, True, 4)],
        }
    )
    t = book.at(2, 14, 11)
    assert [c.name for c in t.columns] == ["C1", "C2"] and not t.names_from_catalog
    assert book.at(2, 14, 9) is None
    row = decode_row(h.formatted("<", struct.pack("<iHH", 3, 9, 2) + b"\x00", b"ok"), t)
    assert row.values == {"C1": "3", "C2": "ok"}


# --- an update whose after image is in the preceding insert record ---------------------------


def _id_name_row(bo: str, key: int, name: bytes, outer: int = 0) -> bytes:
    """ID SMALLINT NOT NULL at 0, NAME VARCHAR(10) at 2 (offset/length, null byte at 6)."""
    return h.formatted(bo, struct.pack(bo + "hHH", key, 7, len(name)) + b"\x00", name, outer)


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_update_after_image_is_in_the_preceding_insert_record(byteorder):
    """002_…, "Update record log record": when the new half's record type has the 0x02 bit,
    the after image is in the preceding insert record of the transaction, whose record type
    has the 0x04 bit. The insert's image is an ordinary user row (it is decoded); the update's
    new half is not an image (what follows its record header is not read)."""
    bo = h.order(byteorder)
    table = layout(Column("ID", r.SMALLINT, 2, False, 0), Column("NAME", r.VARCHAR, 10, True, 2))
    carrier_rid = b"\x09\0\0\0\0\x04"
    insert = decode_record(
        h.record(bo, h.insert_body(bo, 162, _id_name_row(bo, 7, b"after", 0x04), rid=carrier_rid),
                 lsn=100),
        byteorder,
    )  # fmt: skip
    pointer = h.image(bo, carrier_rid, 0x02)
    update = decode_record(
        h.record(bo, h.update_body(bo, _id_name_row(bo, 7, b"before"), pointer), lsn=101),
        byteorder,
    )
    assert (insert["kind"], update["kind"]) == ("row_insert", "row_update")
    assert update["after_image"] == pointer and update["after_image"][0] == 0x02
    carried = decode_row(insert["after_image"], table, byteorder)
    assert (carried.record_kind, carried.record_type) == ("user_row", 0x04)
    assert carried.values == {"ID": "7", "NAME": "after"}
    elsewhere = decode_row(update["after_image"], table, byteorder)
    assert (elsewhere.record_kind, elsewhere.record_type, elsewhere.values) == (
        "image_elsewhere", 0x02, {})  # fmt: skip
    before = decode_row(update["before_image"], table, byteorder)
    assert before.values == {"ID": "7", "NAME": "before"} and before.record_type == 0


# --- table ids reused after DROP TABLE -------------------------------------------------------


def _lifecycle_records(bo: str, byteorder: str) -> list[dict]:
    """Hand-laid records of ids (2, 15): CREATE TABLE (DOM 101) + initialize table (INTEGER,
    VARCHAR(20)); a DROP TABLE rolled back (DOM 4, then compensation DOM 5); the real DROP
    TABLE; CREATE TABLE + initialize table of another table (BIGINT, CHAR(8), SMALLINT) on the
    same ids."""
    old = [h.column(bo, r.INTEGER, 4, 0x0002, 0), h.column(bo, r.VARCHAR, 20, 0x0001, 4)]
    new = [h.column(bo, r.BIGINT, 8, 0x0002, 0), h.column(bo, r.CHAR, 8, 0x0002, 8),
           h.column(bo, r.SMALLINT, 2, 0x0001, 16)]  # fmt: skip
    parts = [
        (10, h.dom(bo, 101, 2, 15), {}),
        (11, h.initialize_table_body(bo, old), {}),
        (20, h.dom(bo, 4, 2, 15), {}),
        (21, h.dom(bo, 5, 2, 15), {"rtype": 0x43, "extension": h.undo_extension(bo)}),
        (30, h.dom(bo, 4, 2, 15), {}),
        (40, h.dom(bo, 101, 2, 15), {}),
        (41, h.initialize_table_body(bo, new), {}),
    ]
    return [
        decode_record(h.record(bo, body + (b"" if body[0] == 1 else bytes(72)), lsn=lsn, **kw),
                      byteorder)
        for lsn, body, kw in parts
    ]  # fmt: skip


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_a_dropped_tables_ids_reused_by_a_new_table_give_two_tables(byteorder, tmp_path):
    """A drop ends the table after the drop record's LSN; a rolled-back drop (undo drop table)
    does not; the table created later on the same ids is decoded with its own layout and takes
    the catalog export's names (the export is the state at the end); the dropped one keeps
    C1..Cn and is named after its ids and drop LSN."""
    records = _lifecycle_records(h.order(byteorder), byteorder)
    assert [rec["kind"] for rec in records] == [
        "ddl_create_table", "ddl_initialize_table", "ddl_drop_table", "undo_ddl_drop_table",
        "ddl_drop_table", "ddl_create_table", "ddl_initialize_table"]  # fmt: skip
    layouts = catalog(tmp_path, "S,AUDIT,AUDIT_ID,0,BIGINT,8,0,N,1\nS,AUDIT,ACTION,1,CHARACTER,8,0,"
                      "N,\nS,AUDIT,N,2,SMALLINT,2,0,Y,\n", "S,AUDIT,2,15,N\n")  # fmt: skip
    book = LayoutBook(layouts)
    for record in reversed(records):  # any order: LSN decides
        book.observe(record)
    first, second = book.history(2, 15)
    assert (first.valid_from_lsn, first.valid_to_lsn, first.dropped_lsn) == (10, 31, 30)
    assert first.table_name == "TBSPACEID=2,TABLEID=15,DROPPED_LSN=000000000000001E"
    assert (first.table_schema, first.key_columns, first.incarnation) == (None, (), 1)
    assert [(c.name, c.type_name) for c in first.layout.columns] == [
        ("C1", "INTEGER"), ("C2", "VARCHAR")]  # fmt: skip
    assert (second.valid_from_lsn, second.valid_to_lsn, second.incarnation) == (40, None, 2)
    assert (second.table_schema, second.table_name, second.key_columns) == (
        "S", "AUDIT", ("AUDIT_ID",))  # fmt: skip
    assert [c.name for c in second.layout.columns] == ["AUDIT_ID", "ACTION", "N"]
    assert second.layout.source == "initialize_table"
    assert book.at(2, 15, 25) is first.layout  # after the rolled-back drop: still the old one
    assert book.at(2, 15, 30) is first.layout  # the drop record itself is the old table's
    assert book.at(2, 15, 35) is None  # between the drop and the next create: no table
    assert book.at(2, 15, 40) is second.layout and book.at(2, 15, 9) is None
    row = decode_row(h.formatted("<", struct.pack("<qhh", 5, 0, 0)[:8] + b"GRANT   " + b"\1\0"
                                 + b"\x00"), second.layout)  # fmt: skip
    assert row.values == {"AUDIT_ID": "5", "ACTION": "GRANT   ", "N": "1"}


def test_drop_without_a_layout_and_ids_reused_later():
    """A table there before the capture (no initialize table record) dropped, its ids reused:
    its rows have no layout, and say why; the new table's is from its initialize table."""
    bo = "<"
    records = _lifecycle_records(bo, "little")[4:]  # the real drop, then the new table
    book = LayoutBook()
    for record in records:
        book.observe(record)
    dropped, created = book.history(2, 15)
    assert (dropped.valid_from_lsn, dropped.valid_to_lsn, dropped.layout) == (-1, 31, None)
    assert "was dropped at LSN 000000000000001E" in dropped.error
    assert (created.valid_from_lsn, created.table_name) == (40, "TBSPACEID=2,TABLEID=15")
    assert [c.name for c in created.layout.columns] == ["C1", "C2", "C3"]


def test_create_table_without_drop_ends_the_earlier_table_and_mdc_creates_are_one_table():
    """A create table on ids in use (the drop not in the capture) ends the earlier table; the
    second create table record of an MDC table (its block map) belongs to the same table."""
    bo = "<"
    records = _lifecycle_records(bo, "little")
    mdc_block_map, initialize = {**records[0], "lsn": 11}, {**records[1], "lsn": 12}
    book = LayoutBook()
    for record in [records[0], mdc_block_map, initialize, records[5], records[6]]:
        book.observe(record)
    first, second = book.history(2, 15)
    assert (first.valid_from_lsn, first.valid_to_lsn, first.dropped_lsn) == (10, 40, None)
    assert len(first.layout.columns) == 2 and first.layout.source == "initialize_table"
    assert first.table_name == "TBSPACEID=2,TABLEID=15,DROPPED_BEFORE_LSN=0000000000000028"
    assert (second.valid_from_lsn, second.table_name) == (40, "TBSPACEID=2,TABLEID=15")
    assert len(second.layout.columns) == 3


# --- range-partitioned tables and distinct types (docs/db2luw.md interpretation 21) ----------


def partitioned_catalog(tmp_path) -> dict:
    """SALES.ORDERS (ids 2/20) with two data partitions (3/40 and 4/41); its AMT column is of
    the distinct type SALES.MONEY (DECIMAL(9,2)), so SYSCAT.COLUMNS says LENGTH 0."""
    (tmp_path / "tables.csv").write_text("TABSCHEMA,TABNAME,TBSPACEID,TABLEID\nSALES,ORDERS,2,20\n")
    (tmp_path / "columns.csv").write_text(
        "TABSCHEMA,TABNAME,COLNAME,COLNO,TYPESCHEMA,TYPENAME,LENGTH,SCALE,NULLS,KEYSEQ\n"
        "SALES,ORDERS,ID,0,SYSIBM,INTEGER,4,0,N,1\nSALES,ORDERS,AMT,1,SALES,MONEY,0,0,Y,\n"
    )
    (tmp_path / "datapartitions.csv").write_text(
        "TABSCHEMA,TABNAME,DATAPARTITIONNAME,DATAPARTITIONID,TBSPACEID,PARTITIONOBJECTID\n"
        "SALES,ORDERS,P2024,0,3,40\nSALES,ORDERS,P2025,1,4,41\n"
    )
    (tmp_path / "datatypes.csv").write_text(
        "TYPESCHEMA,TYPENAME,SOURCESCHEMA,SOURCENAME,METATYPE,LENGTH,SCALE\n"
        "SALES,MONEY,SYSIBM,DECIMAL,T,9,2\n"
    )
    return read_catalog(tmp_path)


def test_partition_ids_take_their_tables_layout_and_name(tmp_path):
    layouts = partitioned_catalog(tmp_path)
    assert set(layouts) == {(2, 20), (3, 40), (4, 41)}
    part = layouts[(4, 41)]
    assert (part.schema, part.name, part.key_columns) == ("SALES", "ORDERS", ("ID",))
    assert (part.table_space_identifier, part.table_identifier) == (4, 41)
    # An insert record on the partition (DMS header ts 4, table 41), laid out by hand:
    # ID INTEGER at 0, AMT DECIMAL(9,2) (5 bytes packed) at 4, its null byte at 9.
    fixed = struct.pack("<i", 7) + bytes.fromhex("000052750c") + b"\x00"
    body = h.insert_body("<", 162, h.formatted("<", fixed))
    body = h.dms("<", 162, 4, 41) + body[6:]
    record = decode_record(h.record("<", body, lsn=500))
    assert (record["table_space_identifier"], record["table_identifier"]) == (4, 41)
    book = LayoutBook(layouts)
    book.observe(record)
    version = book.version_at(4, 41, 500)
    assert (version.table_schema, version.table_name) == ("SALES", "ORDERS")
    row = decode_row(record["after_image"], version.layout)
    assert row.values == {"ID": "7", "AMT": "527.50"}


def test_distinct_type_columns_decode_as_their_source_type(tmp_path):
    amt = partitioned_catalog(tmp_path)[(2, 20)].columns[1]
    assert (amt.type_name, amt.precision, amt.scale, amt.length) == ("DECIMAL", 9, 2, 5)
    assert functions.column_type(amt) == "DECIMAL(9,2)"
    # without the datatypes export the type is unknown, and the error says what to export
    (tmp_path / "datatypes.csv").unlink()
    with pytest.raises(DecodeError, match=r"datatypes\.csv"):
        read_catalog(tmp_path)


def test_distinct_type_by_name_alone_when_the_export_has_no_typeschema():
    types = r.distinct_types([{"TYPESCHEMA": "S", "TYPENAME": "CODE", "SOURCENAME": "CHARACTER",
                               "LENGTH": "3", "SCALE": "0", "METATYPE": "T"}])  # fmt: skip
    row = {"COLNAME": "C", "TYPENAME": "CODE", "LENGTH": "0", "SCALE": "0"}
    assert r.resolve_distinct_type(row, types)["TYPENAME"] == "CHARACTER"
    assert r.resolve_distinct_type(row, types)["LENGTH"] == "3"
    builtin = {"COLNAME": "C", "TYPESCHEMA": "SYSIBM", "TYPENAME": "INTEGER", "LENGTH": "4"}
    assert r.resolve_distinct_type(builtin, types) == builtin


def test_layout_history_reads_the_sqls_joined_distinct_type():
    """int_db2luw_table_versions joins SYSCAT.DATATYPES: a column carries sourcename,
    type_length, type_scale; the partition's ids are the JSON's tbspaceid/tableid."""
    catalog_json = (
        '{"tabschema": "SALES", "tabname": "ORDERS", "tbspaceid": 4, "tableid": 41, "columns": ['
        '{"colname": "ID", "colno": 0, "typename": "INTEGER", "length": 4, "scale": 0,'
        ' "nulls": "N", "keyseq": 1},'
        '{"colname": "AMT", "colno": 1, "typename": "MONEY", "length": 0, "scale": 0,'
        ' "nulls": "Y", "sourcename": "DECIMAL", "type_length": 9, "type_scale": 2}]}'
    )
    (version,) = functions.layout_history(catalog_json, None, [])
    assert (version["table_schema"], version["table_name"], version["error"]) == (
        "SALES", "ORDERS", None)  # fmt: skip
    assert version["column_types"] == ["INTEGER", "DECIMAL(9,2)"]


# --- partition records of the log (002_… Tables 28/29; interpretation 21) ----------------------


def partition_state(
    action: int, ts: int = 5, table: int = 42, master=(2, 20), function=137, partition_id: int = 2
) -> bytes:
    """An update partition state record body laid out at Table 28's offsets: DMS header with
    the partition's ids (0), master table space id (6), master table id (8), internal (10),
    data partition id (12), internal (14, 6 bytes; 20, 2 bytes), partition action (22): 24."""
    body = bytearray(24)
    body[0:6] = h.dms("<", function, ts, table)
    struct.pack_into("<H", body, 6, master[0])
    struct.pack_into("<H", body, 8, master[1])
    struct.pack_into("<H", body, 10, 0xABCD)  # internal: not read
    struct.pack_into("<H", body, 12, partition_id)
    body[14:22] = b"\xee" * 8  # internal: not read
    struct.pack_into("<H", body, 22, action)
    return bytes(body)


def partition_insert(key: int, lsn: int, ts: int = 5, table: int = 42) -> dict:
    """An insert on the partition's ids: ID INTEGER at 0, AMT DECIMAL(9,2) at 4, null byte 9."""
    fixed = struct.pack("<i", key) + bytes.fromhex("000012345c") + b"\x00"
    body = h.dms("<", 162, ts, table) + h.insert_body("<", 162, h.formatted("<", fixed))[6:]
    return decode_record(h.record("<", body, lsn=lsn))


def catalog_without_partitions(tmp_path, detached: bool = False) -> dict:
    """SALES.ORDERS (2/20) as partitioned_catalog writes it, without datapartitions.csv (the
    partition 5/42 is known to the log alone); ``detached``: the export also has the table the
    partition became, SALES.ORDERS_2026 on the partition's ids."""
    partitioned_catalog(tmp_path)
    (tmp_path / "datapartitions.csv").unlink()
    if detached:
        with (tmp_path / "tables.csv").open("a") as handle:
            handle.write("SALES,ORDERS_2026,5,42\n")
        with (tmp_path / "columns.csv").open("a") as handle:
            handle.write(
                "SALES,ORDERS_2026,ID,0,SYSIBM,INTEGER,4,0,N,1\n"
                "SALES,ORDERS_2026,AMT,1,SALES,MONEY,0,0,Y,\n"
            )
    return read_catalog(tmp_path)


def test_partition_state_record_reads_table_28s_offsets():
    record = decode_record(h.record("<", partition_state(1), lsn=450))
    assert record["kind"] == "ddl_partition_state"
    assert (record["table_space_identifier"], record["table_identifier"]) == (5, 42)
    assert (record["master_table_space_identifier"], record["master_table_identifier"]) == (2, 20)
    assert (record["data_partition_identifier"], record["partition_action"]) == (2, 1)
    assert record["partition_action_name"] == "add_partition"


@pytest.mark.parametrize("action", [1, 2])  # ADD PARTITION, ATTACH PARTITION
def test_an_added_partitions_rows_decode_under_its_table_from_the_records_lsn(tmp_path, action):
    book = LayoutBook(catalog_without_partitions(tmp_path))
    assert (5, 42) not in book.catalog
    records = [
        partition_insert(6, 400),
        decode_record(h.record("<", partition_state(action), lsn=450)),
        partition_insert(7, 500),
    ]
    for record in records:
        book.observe(record)
    assert book.version_at(5, 42, 400) is None  # before the ADD: the ids are nobody's
    version = book.version_at(5, 42, 500)
    assert (version.table_schema, version.table_name, version.master) == (
        "SALES",
        "ORDERS",
        (2, 20),
    )
    assert (version.valid_from_lsn, version.valid_to_lsn, version.key_columns) == (
        450,
        None,
        ("ID",),
    )
    assert (version.layout.table_space_identifier, version.layout.table_identifier) == (5, 42)
    assert decode_row(records[2]["after_image"], version.layout).values == {
        "ID": "7",
        "AMT": "123.45",
    }
    # the table's own ids are not a partition
    assert book.version_at(2, 20, 500).master is None


def test_a_detach_leaves_the_rows_before_it_named_as_the_table(tmp_path):
    """ADD at 450, rows, DETACH (13 logically detached at 600, 21 complete at 700): the rows
    up to the first detach record are SALES.ORDERS'; after it the ids are the detached table,
    which the export (taken at the end) has as SALES.ORDERS_2026."""
    book = LayoutBook(catalog_without_partitions(tmp_path, detached=True))
    for lsn, action in ((450, 1), (600, 13), (700, 21)):
        book.observe(decode_record(h.record("<", partition_state(action), lsn=lsn)))
    partition, detached = book.history(5, 42)
    assert (partition.table_name, partition.valid_from_lsn, partition.valid_to_lsn) == (
        "ORDERS",
        450,
        601,
    )
    assert partition.master == (2, 20) and partition.dropped_lsn is None
    assert (detached.table_name, detached.valid_from_lsn, detached.valid_to_lsn) == (
        "ORDERS_2026",
        601,
        None,
    )
    assert detached.master is None and detached.incarnation == 2
    assert book.version_at(5, 42, 599).table_name == "ORDERS"
    assert book.version_at(5, 42, 650).table_name == "ORDERS_2026"


def test_a_detach_of_a_partition_the_export_no_longer_lists(tmp_path):
    """A partition there from the start (no ADD in the capture) and detached in it: its rows
    before the detach are the table's (the DETACH record names the master), from the start."""
    book = LayoutBook(catalog_without_partitions(tmp_path, detached=True))
    book.observe(decode_record(h.record("<", partition_state(8), lsn=600)))
    before, after = book.history(5, 42)
    assert (before.table_name, before.valid_from_lsn, before.valid_to_lsn) == ("ORDERS", -1, 601)
    assert (after.table_name, after.valid_from_lsn) == ("ORDERS_2026", 601)


def test_a_rolled_back_add_partition_maps_nothing(tmp_path):
    book = LayoutBook(catalog_without_partitions(tmp_path))
    compensation = dict(rtype=0x43, extension=bytes(24))  # propagatable: 40 + 24 bytes header
    book.observe(decode_record(h.record("<", partition_state(1), lsn=450)))
    undo = decode_record(h.record("<", partition_state(1, function=108), lsn=460, **compensation))
    assert undo["kind"] == "undo_ddl_partition_state" and undo["partition_action"] == 1
    book.observe(undo)
    assert book.history(5, 42) == []


def test_partition_records_of_a_table_the_catalog_lacks_map_nothing(tmp_path):
    """No catalog entry for the master: the ids stay unknown (rows quarantined, no layout)."""
    book = LayoutBook(catalog_without_partitions(tmp_path))
    book.observe(decode_record(h.record("<", partition_state(1, master=(9, 99)), lsn=450)))
    assert book.history(5, 42) == []


def test_a_catalog_partition_keeps_its_ids_from_the_start_and_an_add_in_the_log_from_its_lsn(
    tmp_path,
):
    layouts = partitioned_catalog(tmp_path)  # datapartitions.csv lists 3/40 and 4/41
    book = LayoutBook(layouts, {(3, 40): (2, 20), (4, 41): (2, 20)})
    (listed,) = book.history(4, 41)
    assert (listed.valid_from_lsn, listed.table_name, listed.master) == (-1, "ORDERS", (2, 20))
    book.observe(decode_record(h.record("<", partition_state(1, ts=3, table=40), lsn=450)))
    (added,) = book.history(3, 40)
    assert (added.valid_from_lsn, added.table_name, added.master) == (450, "ORDERS", (2, 20))


def test_attach_of_a_table_created_in_the_capture_names_it_until_the_attach(tmp_path):
    """CREATE TABLE (initialize table on 5/42) then ATTACH PARTITION: the rows before the
    attach are the source table's, named by its ids and the attach LSN; after it ORDERS'."""
    book = LayoutBook(catalog_without_partitions(tmp_path))
    descriptor = struct.pack("<HHHH", 0x0001, 4, 0x0002, 0)  # ID INTEGER NOT NULL at 0
    description = struct.pack("<BBH", 0x10, 0, 1) + descriptor
    head = struct.pack("<Q", 1) + bytes(74) + struct.pack("<I", len(description))
    book.observe(decode_record(h.record("<", h.dms("<", 128, 5, 42) + head + description, lsn=300)))
    book.observe(decode_record(h.record("<", partition_state(2), lsn=450)))
    source, partition = book.history(5, 42)
    assert (source.table_name, source.valid_from_lsn, source.valid_to_lsn) == (
        f"TBSPACEID=5,TABLEID=42,ATTACHED_LSN={450:016X}",
        300,
        450,
    )
    assert source.master is None and source.layout.columns[0].name == "C1"
    assert (partition.table_name, partition.valid_from_lsn, partition.master) == (
        "ORDERS",
        450,
        (2, 20),
    )


def test_layout_history_takes_the_master_catalog_from_the_partition_record():
    """What int_db2luw_table_versions hands the UDF for ids only the log's 137 record names:
    no catalog JSON of their own; the record carries its master table's as master_catalog."""
    master = (
        '{"tabschema": "SALES", "tabname": "ORDERS", "tbspaceid": 2, "tableid": 20, '
        '"columns": [{"colname": "ID", "colno": 0, "typename": "INTEGER", "length": 4, '
        '"scale": 0, "nulls": "N", "keyseq": 1}]}'
    )
    record = {
        "lsn": 450,
        "kind": "ddl_partition_state",
        "table_space_identifier": 5,
        "table_identifier": 42,
        "master_table_space_identifier": 2,
        "master_table_identifier": 20,
        "partition_action": 1,
        "master_catalog": master,
    }
    (version,) = functions.layout_history(None, None, [record])
    assert (version["table_schema"], version["table_name"], version["valid_from_lsn"]) == (
        "SALES",
        "ORDERS",
        450,
    )
    assert (version["master_table_space_identifier"], version["master_table_identifier"]) == (2, 20)
    assert version["key_columns"] == ["ID"] and version["error"] is None
    # a data partition of the export: its JSON names its table's ids
    listed = master.replace(
        '"tbspaceid": 2, "tableid": 20',
        '"tbspaceid": 4, "tableid": 41, "master_tbspaceid": 2, "master_tableid": 20',
    )
    (version,) = functions.layout_history(listed, None, [])
    assert (version["valid_from_lsn"], version["master_table_identifier"]) == (-1, 20)
    # the table itself is no partition
    (version,) = functions.layout_history(master, None, [])
    assert version["master_table_identifier"] is None
