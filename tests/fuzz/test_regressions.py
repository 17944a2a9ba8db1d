"""Bugs the fuzzers found, each pinned by the minimal input that showed it.

Every test names the decoder, what went wrong before the fix, and what the bytes must give now.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.db2luw import handmade as luw_handmade
from tests.logmaster import handmade
from udfs import batch_values as bv
from udfs import values
from udfs.db2luw import readers as luw_data
from udfs.errors import DecodeError
from udfs.framing import FrameBatch
from udfs.logmaster import batch_records, control
from udfs.logmaster import rows as row_images
from udfs.soliddb import functions as soliddb_functions
from udfs.soliddb import readers as soliddb_readers
from udfs.soliddb import source as soliddb_source


def _soliddb_layout(*columns: tuple[str, str]) -> str:
    return json.dumps(
        {
            "char_codec": "utf-8",
            "wchar_codec": "utf-16-be",
            "columns": [[name, sql_type, None, True] for name, sql_type in columns],
        }
    )


def test_soliddb_timestamp_with_a_three_digit_minute_is_a_row_error_not_a_crash():
    """values.timestamp_parts_text formatted minute 100 as '100' and sliced the text at fixed
    places: int(':0') raised ValueError out of logmart_soliddb_row (the build failed)."""
    timestamp = b"\x00\x00\x00\x00\x00\x64\x00\x00\x00\x00\x00"  # 0000-00-00 00:100:00
    with pytest.raises(DecodeError, match="out of range"):
        values.datetime11_text(timestamp, "TIMESTAMP")
    result = soliddb_functions.row_arrow(
        pa.array([bytes([11]) + timestamp]), pa.array([_soliddb_layout(("TS", "TIMESTAMP"))])
    ).to_pylist()
    assert result == [
        {
            "values": None,
            "null_reasons": None,
            "error": "column TS (TIMESTAMP): timestamp parts 0-0-0 0:100:0 are out of range",
        }
    ]


@pytest.mark.parametrize("parts", [(10000, 1, 1, 0, 0, 0), (2024, 1, 1, 0, 0, -1)])
def test_timestamp_parts_out_of_their_digits_are_decode_errors(parts):
    with pytest.raises(DecodeError, match="out of range"):
        values.timestamp_parts_text(*parts)


@pytest.mark.parametrize("codec", ["utf\x008", "hex", "base64", "rot13"])
def test_code_page_settings_that_are_not_text_codecs_are_decode_errors(codec):
    """check_codec let codecs.lookup's ValueError (a NUL in the name) escape, and accepted
    bytes-to-bytes codecs whose decode then raised LookupError: both crashed the UDFs that
    take a code page from a dbt var (e.g. logmart_soliddb_statement)."""
    with pytest.raises(DecodeError, match="unknown code page"):
        values.check_codec(codec)
    result = soliddb_functions.statement_arrow(
        pa.array([6]), pa.array([b"\x05hello"]), pa.array([codec])
    ).to_pylist()
    expected = f"unknown code page {codec!r}: use a Python codec name such as cp037"
    assert result[0]["error"] == expected


@pytest.mark.parametrize("codec", ["punycode", "undefined"])
def test_codecs_raising_plain_unicode_error_are_decode_errors(codec):
    """values.text caught UnicodeDecodeError only; these codecs raise its base UnicodeError."""
    with pytest.raises(DecodeError, match=f"not valid {codec}"):
        values.text(b"\xff\x00", codec)


def test_log_master_decimals_of_scale_7_and_more_render_plain():
    """batch_values.packed_decimals cast an Arrow decimal128 to text, and Arrow writes values
    whose adjusted exponent is below -6 in scientific notation: a DEC(15,7) zero came out of
    the row image decoder as '0E-7' (values.packed_decimal says '0.0000000')."""
    matrix = np.array([[0x0C], [0x5D], [0x1C], [0x9F]], np.uint8)
    texts, bad = bv.packed_decimals(matrix, 7)
    assert not bad.any()
    assert texts.to_pylist() == ["0.0000000", "-0.0000005", "0.0000001", "0.0000009"]
    wide = np.array([[0x00, 0x00, 0x12, 0x3C], [0x12, 0x34, 0x56, 0x7C]], np.uint8)
    assert bv.packed_decimals(wide, 9)[0].to_pylist() == ["0.000000123", "0.001234567"]
    layout = row_images.parse_layout("E|cp037|latin-1|hfp|Y|1,DEC,4,9,N,,")
    images = row_images.decode_data([b"\x00\x08\x00\x04" + bytes(wide[0])], ["I"], layout)
    assert images.after == [["0.000000123"]] and images.errors == [None]


@pytest.mark.parametrize(
    "stamp",
    ["2024023010000000000000000000000000", "2023022910000000000000000000000000",
     "2024050610600000000000000000000000", "2024050624000100000000000000000000"],
    ids=["feb-30", "feb-29-no-leap-year", "minute-60", "after-24h"],
)  # fmt: skip
def test_lldf_header_timestamps_are_checked_like_the_scalar_decoder(stamp):
    """batch._ts17 checked days <= 31 and hours <= 24 only, so the LLDF header path decoded
    BIN(17) timestamps such as 2024-02-30 or 10:60 that values.bin17_timestamp rejects; staging
    then casts them to timestamp, which fails the build under ANSI mode."""
    record = handmade.lldf_header().hexa(0x3C, stamp).bytes()
    framed = handmade.rdw(record)
    frames = FrameBatch(framed, 0, np.array([0], np.int64), np.array([len(framed)], np.int64))
    decoded = batch_records.decode_data_batch(frames, control.DOCUMENTED_LAYOUT, "cp037", "x", "f")
    assert decoded.column("decode_error").to_pylist() == [
        "LLDF record at offset 0: TIMESTAMP is not a valid BIN(17) timestamp"
    ]
    with pytest.raises(DecodeError):
        values.bin17_timestamp(bytes.fromhex(stamp))
    assert values.bin17_timestamp(bytes.fromhex("2024022924000000000000000000000000"))


@pytest.mark.parametrize(
    ("kind", "text"),
    [("DTTM", "2024-01-01-10.00.00:123456"), ("DTTZ", "2024-01-01-10.00.00.123456+05.30"),
     ("DTTM", "2024-01-01-10.00.00.1234567890123")],
    ids=["colon-before-fraction", "dot-in-zone", "13-fraction-digits"],
)  # fmt: skip
def test_character_timestamps_take_the_separators_the_scalar_decoder_takes(kind, text):
    """batch_values.temporal_strings let ':' stand before the fraction and '.' in the zone,
    and read any number of fraction digits, so Log Master DTTM/DTTZ values the scalar
    values.timestamp_text rejects came out decoded (with the stray separator in the text)."""
    matrix = np.frombuffer(text.encode("cp037"), np.uint8).reshape(1, -1)
    rendered, bad = bv.temporal_strings(matrix, kind, "cp037")
    assert bad.tolist() == [True] and rendered.to_pylist() == [None]
    with pytest.raises(DecodeError):
        values.timestamp_text(text)
    good = text[:19] + "." + text[20:26] + ("+05:30" if kind == "DTTZ" else "")
    rendered, bad = bv.temporal_strings(
        np.frombuffer(good.encode("cp037"), np.uint8).reshape(1, -1), kind, "cp037"
    )
    assert rendered.to_pylist() == [values.timestamp_text(good)] and not bad.any()


def test_xhdf_records_naming_no_known_field_give_the_documented_layout():
    """header_layout_from_xhdf returned a layout without fields when every XHDF record named
    a field logmart does not know; its width (max of nothing) raised ValueError in the
    logmart_logmaster data source on the executors, for every data file of the extract."""
    layout = control.header_layout_from_xhdf(
        [{"fieldname": "NOTAFIELD", "fieldlength": 2, "fieldoffset": 0}]
    )
    assert layout.fields == control.DOCUMENTED_LAYOUT.fields and layout.width == 288
    assert layout.notes[-1] == (
        "no XHDF field is one logmart knows; the documented header layout is used"
    )
    record = handmade.rdw(handmade.lldf_header().bytes())
    frames = FrameBatch(record, 0, np.array([0], np.int64), np.array([len(record)], np.int64))
    decoded = batch_records.decode_data_batch(frames, layout, "cp037", "x", "f").to_pylist()
    assert decoded[0]["decode_error"] is None and decoded[0]["tablename"] == "ORDERS"


@pytest.mark.parametrize(
    ("cell", "value"), [("char_max_length", "--5"), ("data_type", "²"), ("numeric_scale", "٣")]
)
def test_soliddb_catalog_cells_that_only_look_numeric_do_not_crash_the_layout_history(cell, value):
    """catalog._optional_int and layouts.canonical_sql_type tested str.isdigit() (true for '²',
    and for '--5' after lstrip('-')) then called int(), whose ValueError escaped
    logmart_soliddb_layout_history and failed the build."""
    column = {"rel_id": "7", "column_name": "A", "column_number": "1", "data_type": "VARCHAR"}
    entries = soliddb_functions.layout_history(
        [{"id": "7", "table_name": "T"}], [{**column, cell: value}], [], "utf-8", "utf-16-be"
    )
    assert [entry["error"] for entry in entries] == [None]
    assert entries[0]["column_types"] == ["²" if value == "²" else "VARCHAR"]


@pytest.mark.parametrize(("lsn_high", "lfs"), [(False, 2**63 + 5), (True, 7)], ids=["lfs", "lsn"])
def test_db2readlog_prefix_values_beyond_int64_quarantine_the_record(lsn_high, lfs):
    """db2luw.data._log_row put the filter data's LFS (u64, never checked against the header)
    into the int64 frame_lfs column: one flipped high bit raised OverflowError in
    logmart_db2luw, failing the Spark job for the whole file. With a non-zero sqlcode the LSN
    went the same way unchecked."""
    lsn = 2**63 + 9 if lsn_high else 1000
    record = luw_handmade.record("<", luw_handmade.dms("<", 7), lsn=lsn)
    prefix = struct.pack("<QQQQQQIi", 1, lfs, lsn, 0, 0, 0, len(record), -1 if lsn_high else 0)
    framed = prefix + record
    frames = FrameBatch(framed, 0, np.array([0], np.int64), np.array([len(framed)], np.int64))
    rows = pa.Table.from_batches(list(luw_data.log_batch(frames, "c", "f", "filter", "little")))
    row = rows.to_pylist()[0]
    assert row["decode_error"] == (
        f"the framing prefix of the record at offset 0 says LSN {lsn}, LFS {lfs}: beyond a "
        "signed 64-bit value, so the prefix is damaged"
    )
    assert (row["frame_lsn"], row["frame_lfs"], row["record_bytes"]) == (None, None, framed)


@pytest.mark.parametrize("kind", ["DATE", "DEC", "CHAR", "DTTM"])
def test_log_master_fixed_columns_of_length_zero_make_the_layout_unusable_not_a_crash(kind):
    """A blank DLCI LLCOLUMNLEN reaches the layout as 0: decoding a DATE column of width 0 raised
    ZeroDivisionError and a DEC one IndexError out of logmart_logmaster_row_images."""
    layout_text = f"E|cp037|latin-1|hfp|Y|1,{kind},0,0,N,,"
    result = row_images.row_images_arrow(
        pa.array([b"\x00\x04\x00\x00"]), pa.array(["I"]), pa.array([layout_text])
    ).to_pylist()
    assert result[0]["error"] == (
        f"table layout unusable: column 1: LLCOLUMNLEN 0 is not the length of a {kind} column"
    )


def test_a_parquet_export_whose_footer_names_are_not_utf8_is_one_quarantined_record(tmp_path):
    """soliddb.source.parquet_splits (on the driver) caught OSError and ArrowException only; a
    footer column name that is not UTF-8 raised UnicodeDecodeError there and failed the whole
    build instead of quarantining the file."""
    path = tmp_path / "capture01" / "sys_log.parquet"
    path.parent.mkdir()
    pq.write_table(pa.table({"LOGADDR": [b"\x00" * 20], "RECID": [1]}), path)
    raw = bytearray(path.read_bytes())
    raw[raw.find(b"LOGADDR") + 1] = 0xFF  # the first copy of the name: the footer's schema
    path.write_bytes(bytes(raw))
    with pytest.raises(UnicodeDecodeError):
        pq.ParquetFile(path).metadata
    reader = soliddb_source.SolidDbReader({"path": str(tmp_path), "raw_root": str(tmp_path)},
                                          "sys_log")  # fmt: skip
    rows = [row for part in reader.partitions() for b in reader.read(part) for row in b.to_pylist()]
    assert [(row["raw_offset"], row["record_length"]) for row in rows] == [(0, len(raw))]
    assert rows[0]["decode_error"].startswith(
        "the file could not be read as a parquet SYS_LOG export ('utf-8' codec can't decode"
    )


@pytest.mark.parametrize("cell", ["0\x1f", "7\x1c", "\x1e12"])
def test_soliddb_integer_cells_with_a_control_character_are_an_error_not_a_crash(cell):
    """readers.parse_integer matched the cell with `\\s*[+-]?\\d+\\s*` (Unicode: \\s takes the
    separators \\x1c-\\x1f) and then called int(), which does not strip them: its ValueError
    escaped the reader. Such a cell is not a whole number."""
    with pytest.raises(DecodeError, match=r"TRXID .* is not a whole number"):
        soliddb_readers.parse_integer(cell, "TRXID")
    assert soliddb_readers.parse_integer(" 12\t", "TRXID") == 12
