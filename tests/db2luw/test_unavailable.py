"""Db2 LUW: what the log does not carry is not NULL (issue 14 item 9).

decode_row's ``unavailable`` names each column whose value the row image does not hold, with a
reason of udfs.unavailable; a logged NULL (null byte 0x01, attribute byte 0x01) is not there.
Bytes are laid by hand after ``002_…`` ("Formatted user data record for a table without / with
VALUE COMPRESSION", "Extracting inlined LOB data"), little-endian."""

from __future__ import annotations

import json
import struct
from collections import Counter

import pytest

from tests.db2luw import handmade as h
from tests.db2luw.replay import dropped_name, read_jsonl
from udfs import unavailable as na
from udfs.db2luw import functions
from udfs.db2luw import rows as r
from udfs.db2luw.rows import Column, TableLayout, decode_row, unavailable_reason


def layout(*columns: Column) -> TableLayout:
    return TableLayout(columns=columns)


def test_formatted_row_by_hand_null_out_of_row_lob_and_added_column():
    # ID SMALLINT at 0 (2 bytes), NOTE VARCHAR nullable at 2 (offset+length 4, null byte),
    # DOC CLOB nullable at 7 (4 + null byte), GONE CHAR(1) nullable at 12 (null byte),
    # TIER CHAR(1) nullable at 14: added later, beyond the 14-byte fixed section.
    table = layout(
        Column("ID", r.SMALLINT, 2, False, 0),
        Column("NOTE", r.VARCHAR, 900, True, 2),
        Column("DOC", r.CLOB, 0, True, 7),
        Column("GONE", r.CHAR, 1, True, 12),
        Column("TIER", r.CHAR, 1, True, 14),
    )
    image = bytes.fromhex(
        "00 00 32 00"  # record header: type 0, reserved, length 50
        "01 00 0e 00"  # formatted user data, fixed section 14 bytes
        "07 00"  # ID = 7
        "0e 80 18 00 00"  # NOTE: offset 0x8000|14 (out of row), length 24, not null
        "26 00 04 00 00"  # DOC: offset 38, length 4, not null
        "40 01"  # GONE: value byte, null byte 0x01 = NULL
        + "00" * 24  # NOTE's 24-byte varying-length data descriptor (at 14)
        + "01 00 00 00"  # DOC at 38: first byte neither 0x69 nor 0x80, a LOB descriptor
    )
    row = decode_row(image, table)
    assert row.values == {"ID": "7", "NOTE": None, "DOC": None, "GONE": None, "TIER": None}
    assert row.none_sources == {
        "NOTE": "out_of_row", "DOC": "lob_not_inline", "GONE": "null", "TIER": "not_in_row"
    }  # fmt: skip
    assert row.unavailable == {
        "NOTE": na.NOT_LOGGED_OUT_OF_ROW, "DOC": na.NOT_LOGGED_LOB, "TIER": na.ADDED_AFTER_ROW
    }  # fmt: skip


def test_value_compression_by_hand_attribute_null_is_not_unavailable():
    # 3 columns logged of 4: offsets from the offset array (interpretation 11): 4 entries = 8
    # bytes, so data starts at 8.
    table = layout(
        Column("ID", r.INTEGER, 4, False, 0),
        Column("N", r.INTEGER, 4, True, 0),
        Column("D", r.DATE, 4, True, 0, compress_system_default=True),
        Column("LATE", r.VARCHAR, 10, True, 0),
    )
    image = bytes.fromhex(
        "00 00 16 00"  # record header, length 22
        "02 00 03 00"  # VALUE COMPRESSION, 3 columns in the data portion
        "08 00 0c 80 0d 80 0e 00"  # ID at 8; N attribute at 12; D attribute at 13; end 14
        "05 00 00 00"  # ID = 5
        "01"  # N: attribute NULL
        "80"  # D: COMPRESSED SYSTEM DEFAULT (the insert's date: not in the log)
    )
    row = decode_row(image, table)
    assert row.values == {"ID": "5", "N": None, "D": None, "LATE": None}
    assert row.unavailable == {"D": na.DEFAULT_NOT_LOGGED, "LATE": na.ADDED_AFTER_ROW}


def test_long_xml_and_out_of_row_lob_in_a_value_compressed_row():
    table = layout(
        Column("LV", r.LONG_VARCHAR, 0, True, 0),
        Column("LG", r.LONG_VARGRAPHIC, 0, True, 0),
        Column("XM", r.XML, 0, True, 0),
        Column("BL", r.BLOB, 0, True, 0),
        Column("ST", r.STRUCT, 0, True, 0),
    )
    data = h.compressed("<", [(0, bytes(24)), (0, bytes(24)), (0, b"<a/>"),
                              (0x8000, bytes(24)), (0, b"\x00")])  # fmt: skip
    row = decode_row(data, table)
    assert set(row.values.values()) == {None}
    assert row.unavailable == {
        "LV": na.NOT_LOGGED_LONG, "LG": na.NOT_LOGGED_LONG, "XM": na.NOT_LOGGED_XML,
        "BL": na.NOT_LOGGED_LOB, "ST": na.UNDECODABLE,
    }  # fmt: skip


def test_long_varchar_added_after_the_row_is_added_after_row_not_a_long_field():
    table = layout(Column("ID", r.SMALLINT, 2, False, 0),
                   Column("LV", r.LONG_VARCHAR, 0, True, 2))  # fmt: skip
    row = decode_row(h.formatted("<", struct.pack("<h", 1)), table)
    assert row.none_sources == {"LV": "not_in_row"}
    assert row.unavailable == {"LV": na.ADDED_AFTER_ROW}


def test_undecodable_bytes_and_inline_lobs():
    table = layout(Column("D", r.DATE, 4, False, 0), Column("C", r.CLOB, 0, True, 0),
                   Column("E", r.BLOB, 0, True, 0))  # fmt: skip
    data = h.compressed("<", [(0, bytes.fromhex("2024ab01")), (0, b"\x69\0\0\0hi"), (0, b"\x80")])
    row = decode_row(data, table)
    assert row.values == {"D": None, "C": "hi", "E": ""}
    assert row.unavailable == {"D": na.UNDECODABLE}


@pytest.mark.parametrize(
    ("field_type", "source", "added", "expected"),
    [
        (r.INTEGER, "null", False, None),
        (r.CLOB, "null", True, None),
        (r.INTEGER, "not_in_row", True, na.ADDED_AFTER_ROW),
        (r.LONG_VARCHAR, "not_in_row", False, na.NOT_LOGGED_LONG),
        (r.VARBINARY, "out_of_row", False, na.NOT_LOGGED_OUT_OF_ROW),
        (r.DBCLOB, "out_of_row", False, na.NOT_LOGGED_LOB),
        (r.XML, "unsupported_type", False, na.NOT_LOGGED_XML),
        (r.TIMESTAMP, "system_default_unknown", False, na.DEFAULT_NOT_LOGGED),
        (r.INTEGER, "undecodable: bad", False, na.UNDECODABLE),
    ],
)
def test_unavailable_reason(field_type, source, added, expected):
    column = Column("X", field_type, 4, True, 0)
    assert unavailable_reason(column, source, added=added) == expected
    assert expected is None or expected in na.REASONS


def test_the_row_function_returns_the_reasons_in_column_order():
    table = layout(Column("ID", r.SMALLINT, 2, False, 0), Column("N", r.CHAR, 1, True, 2),
                   Column("TIER", r.CHAR, 1, True, 4))  # fmt: skip
    image = h.formatted("<", struct.pack("<h", 3) + b"x\x01")
    got = functions.decode_image(image, table, dict(functions.DEFAULT_SETTINGS), "little")
    assert got["values"] == ["3", None, None]
    assert got["null_reasons"] == [None, "null", "not_in_row"]
    assert got["unavailable"] == [None, None, na.ADDED_AFTER_ROW]


def _reasons(change: dict) -> tuple[str, str]:
    return tuple(json.dumps(change[side], sort_keys=True)  # type: ignore[return-value]
                 for side in ("before_unavailable", "after_unavailable"))  # fmt: skip


def test_the_generator_writes_lobs_not_inline_longs_and_rows_from_before_an_add_column(tmp_path):
    from logmart_generators.db2luw import generate

    generate(tmp_path, transactions=200, seed=1)
    lines = read_jsonl(tmp_path / "truth/db2luw/changes.jsonl")
    reasons = [
        reason
        for line in lines
        for side in ("before_unavailable", "after_unavailable")
        for reason in (line[side] or {}).values()
    ]
    assert na.NOT_LOGGED_LOB in reasons and na.ADDED_AFTER_ROW in reasons
    # SALES.ALLTYPES.C_LONG, a LONG VARCHAR: a present value is never in the row
    assert na.NOT_LOGGED_LONG in reasons
    longs = [line[side]["C_LONG"] for line in lines if line["table"] == "SALES.ALLTYPES"
             for side in ("before", "after") if line[side] is not None]  # fmt: skip
    assert longs and set(longs) == {None}
    for line in lines:  # a value the log does not carry is null in the truth's image
        for side in ("before", "after"):
            for column in line[f"{side}_unavailable"] or {}:
                assert line[side][column] is None, (line["lsn"], column)


@pytest.mark.spark
def test_the_pipeline_names_what_the_generator_left_out_as_its_truth_does(spark, demo):
    # LOBs longer than their INLINE_LENGTH (a LOB descriptor in the row: not_logged_lob) and
    # rows written before ALTER TABLE ADD COLUMN (added_after_row): fct_changes says of each
    # change what the generator's truth says, nothing more
    root = demo.raw / "truth" / "db2luw"
    lines = read_jsonl(root / "changes.jsonl")
    dropped = json.loads((root / "dropped.json").read_text())
    names = {name: f"None.{dropped_name(table)}" for name, table in dropped.items()}
    want = Counter(
        (names.get(c["table"], c["table"]), c["operation"], c["lsn"], *_reasons(c)) for c in lines
    )
    got = Counter(
        (f"{c.table_schema}.{c.table_name}", c.operation, int(c.log_position.split(".")[0], 16),
         *_reasons(c.asDict(recursive=True)))
        for c in spark.sql(
            "select table_schema, table_name, operation, log_position, before_unavailable, "
            "after_unavailable from marts.fct_changes "
            "where source_system = 'db2luw' and capture = 'capture01'"
        ).collect()
    )  # fmt: skip
    assert got == want
    assert any('"not_logged_lob"' in key[3] + key[4] for key in want)
    assert any('"not_logged_long"' in key[3] + key[4] for key in want)
    assert any('"added_after_row"' in key[3] for key in want)


def test_the_decoder_names_the_generated_long_varchar_as_the_truth_does(tmp_path):
    # SALES.ALLTYPES.C_LONG: a LONG VARCHAR whose row holds a long field descriptor; decode_row
    # with the catalog's layout says not_logged_long where the truth does, and a NULL is NULL
    from logmart_generators.db2luw import generate
    from tests.db2luw.replay import read_capture
    from udfs.db2luw.rows import LayoutBook, read_catalog

    generate(tmp_path, transactions=120, seed=2)
    folder = tmp_path / "db2luw" / "capture01"
    records = read_capture(folder, "filter", "little")
    book = LayoutBook(read_catalog(folder / "catalog"))
    for record in records:
        book.observe(record)
    by_lsn = {record["lsn"]: record for record in records}
    lines = read_jsonl(tmp_path / "truth/db2luw/changes.jsonl")
    checked = Counter()
    for line in lines:
        record = by_lsn.get(line["lsn"])
        if line["table"] != "SALES.ALLTYPES" or line["operation"] != "insert" or not record:
            continue
        if record["kind"] != "row_insert" or len(record["images"] or []) > 1:
            continue  # one image per record: the one this change wrote
        version = book.version_at(
            record["table_space_identifier"], record["table_identifier"], record["lsn"]
        )
        row = decode_row(record["after_image"], version.layout, "little")
        want = line["after_unavailable"].get("C_LONG")
        assert row.unavailable.get("C_LONG") == want, line["lsn"]
        assert row.values["C_LONG"] is None
        checked[want] += 1
    assert checked[na.NOT_LOGGED_LONG] and checked[None], checked
