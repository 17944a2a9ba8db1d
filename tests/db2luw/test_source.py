"""The Db2 LUW data source without Spark: framing by settings (and what a wrong setting says),
one typed row per record, catalog CSV rows, file discovery, record-aligned splits."""

from __future__ import annotations

import struct
from pathlib import Path

import pyarrow as pa
import pytest

from logmart_generators.db2luw import generate
from tests.db2luw import handmade as h
from udfs.db2luw import readers
from udfs.db2luw.records import RECORD_KEYS, decode_record
from udfs.db2luw.source import RECORDS, Db2LuwReader, discover
from udfs.framing import DB2_MAX_RECORD, FrameBatch, FramingFailure, db2_read_log_length, frame_file

SETTINGS = [(f, b) for f in ("filter", "lsn") for b in ("little", "big")]


def read_table(root: Path, **options: str) -> pa.Table:
    reader = Db2LuwReader({"path": str(root), **options})
    batches = [batch for part in reader.partitions() for batch in reader.read(part)]
    schema = RECORDS[options.get("records", "log")]
    return pa.Table.from_batches(batches, schema=schema)


@pytest.fixture(scope="module", params=SETTINGS, ids=lambda s: f"{s[0]}-{s[1]}")
def capture(request, tmp_path_factory) -> tuple[Path, dict]:
    framing, byteorder = request.param
    root = tmp_path_factory.mktemp("db2luw")
    summary = generate(root, 20, 3, framing=framing, byteorder=byteorder, file_bytes=4096)
    return root, summary


def test_every_record_becomes_one_decoded_row(capture):
    root, summary = capture
    table = read_table(root / "db2luw", framing=summary["framing"], byteorder=summary["byteorder"])
    assert table.num_rows == summary["records"]
    rows = table.to_pylist()
    assert all(row["decode_error"] is None for row in rows)
    assert {row["source_file"] for row in rows} == {
        f"db2luw/capture01/{name}" for name in summary["files"]
    }
    prefix = 56 if summary["framing"] == "filter" else 8
    for row in rows:
        path = root / row["source_file"]
        with path.open("rb") as handle:
            handle.seek(row["raw_offset"])
            assert handle.read(row["record_length"]) == row["record_bytes"]
        assert row["record_length"] == prefix + row["log_record_length"]
        assert row["lsn"] == row["frame_lsn"] and row["capture"] == "capture01"
    multiple = [row for row in rows if row["function_name"] == "insert_multiple_records"]
    assert len(multiple) == 1 and len(multiple[0]["images"]) == multiple[0]["row_count"] == 4


def test_a_wrong_setting_quarantines_the_file_and_names_the_right_one(capture):
    root, summary = capture
    right = (summary["framing"], summary["byteorder"])
    for wrong in (setting for setting in SETTINGS if setting != right):
        table = read_table(root / "db2luw", framing=wrong[0], byteorder=wrong[1])
        assert table.num_rows == len(summary["files"])  # one row per file: nothing decoded
        for row in table.to_pylist():
            assert row["raw_offset"] == 0 and row["lsn"] is None
            reason = row["decode_error"]
            assert f"does not fit framing={wrong[0]!r} byteorder={wrong[1]!r}" in reason
            assert f"the bytes fit framing={right[0]!r} byteorder={right[1]!r}" in reason


def write(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def filter_framed(record: bytes, bo: str = "<", sqlcode: int = 0) -> bytes:
    lsn = struct.unpack_from(bo + "Q", record, 8)[0]
    return struct.pack(bo + "6QIi", 1, 77, lsn, 2, 0, 0, len(record), sqlcode) + record


def frames(path: Path, framing: str = "filter", byteorder: str = "little") -> list:
    out = []
    for item in frame_file(path, db2_read_log_length(framing, byteorder), chunk_size=64):
        if isinstance(item, FrameBatch):
            out += [(int(item.file_offset + s), int(n)) for s, n in zip(item.starts, item.lengths)]
        else:
            out.append(item)
    return out


def test_length_reader_frames_across_small_chunks(tmp_path):
    records = [h.record("<", h.dms("<", 211), lsn=n) for n in range(1, 30)]
    path = write(tmp_path / "f.log", b"".join(filter_framed(r) for r in records))
    got = frames(path)
    assert len(got) == 29 and got[1] == (56 + 46, 56 + 46)


def test_truncated_file_is_reported_with_where_it_ends(tmp_path):
    record = filter_framed(h.record("<", h.dms("<", 211), lsn=5))
    path = write(tmp_path / "f.log", record + record[:70])
    failure = frames(path)[-1]
    assert isinstance(failure, FramingFailure) and failure.offset == len(record)
    assert "the file is truncated" in failure.reason


def test_an_absurd_length_is_reported_at_once_not_read_to_the_end(tmp_path):
    record = bytearray(filter_framed(h.record("<", h.dms("<", 211), lsn=5)))
    struct.pack_into("<I", record, 48, DB2_MAX_RECORD + 1)  # realLogRecLen
    struct.pack_into("<I", record, 56, DB2_MAX_RECORD + 1)  # header record length
    path = write(tmp_path / "f.log", bytes(record))
    (failure,) = frames(path)
    assert f"is not between 40 and {DB2_MAX_RECORD}" in failure.reason


def test_a_bad_setting_value_says_what_is_allowed():
    with pytest.raises(ValueError, match="framing must be 'filter' or 'lsn'"):
        db2_read_log_length("filterdata", "little")


def test_sqlcode_and_undecodable_records_carry_their_reason(tmp_path):
    good = h.record("<", h.dms("<", 211), lsn=5)
    bad_component = h.record("<", b"\x09\x01" + bytes(4), lsn=6)
    content = filter_framed(good, sqlcode=-1) + filter_framed(bad_component) + filter_framed(good)
    write(tmp_path / "db2luw" / "cap" / "S0.log", content)
    rows = read_table(tmp_path / "db2luw").to_pylist()
    assert "sqlcode -1" in rows[0]["decode_error"] and rows[0]["frame_sqlcode"] == -1
    assert "unknown component identifier 9" in rows[1]["decode_error"]
    assert f"offset {56 + len(good)}" in rows[1]["decode_error"]
    assert rows[2]["decode_error"] is None and rows[2]["kind"] == "out_of_row_start"


def test_discovery_kinds_and_captures(tmp_path):
    root = tmp_path / "db2luw"
    write(root / "cap" / "S0.log", b"x")
    write(root / "cap" / "S1.log", b"")
    write(root / "cap" / "catalog" / "tables.csv", b"TABSCHEMA\n")
    write(root / "cap" / "notes.txt", b"hello")
    write(root / "top.log", b"y")
    found = {f.relative: (f.capture, f.kind) for f in discover(root, tmp_path)}
    assert found == {
        "db2luw/cap/S0.log": ("cap", "log"),
        "db2luw/cap/S1.log": ("cap", "empty"),
        "db2luw/cap/catalog/tables.csv": ("cap", "catalog"),
        "db2luw/cap/notes.txt": ("cap", "ignored"),
        "db2luw/top.log": ("", "log"),
    }
    assert discover(tmp_path / "absent", tmp_path) == []


def test_absent_folder_reads_nothing(tmp_path):
    for records in ("log", "frames", "catalog_tables", "catalog_columns"):
        assert read_table(tmp_path / "absent", records=records).num_rows == 0


def test_split_ranges_give_the_same_rows(capture):
    root, summary = capture
    options = {"framing": summary["framing"], "byteorder": summary["byteorder"]}
    whole = read_table(root / "db2luw", **options)
    split = read_table(root / "db2luw", split_bytes="1000", **options)
    reader = Db2LuwReader({"path": str(root / "db2luw"), "split_bytes": "1000", **options})
    assert len(reader.partitions()) > len(summary["files"])
    assert split.sort_by([("source_file", "ascending"), ("raw_offset", "ascending")]).equals(
        whole.sort_by([("source_file", "ascending"), ("raw_offset", "ascending")])
    )


def test_frames_mode_keeps_records_undecoded(capture):
    root, summary = capture
    options = {"framing": summary["framing"], "byteorder": summary["byteorder"]}
    frames_table = read_table(root / "db2luw", records="frames", **options)
    assert frames_table.num_rows == summary["records"]
    assert frames_table.schema == readers.FRAMES_SCHEMA


def test_catalog_rows_are_typed_with_their_offsets(capture):
    root, _ = capture
    path = root / "db2luw" / "capture01" / "catalog" / "columns.csv"
    rows = read_table(root / "db2luw", records="catalog_columns").to_pylist()
    content = path.read_bytes()
    assert len(rows) == len(content.splitlines()) - 1
    for row in rows:
        assert content[row["raw_offset"] :].startswith(row["record_bytes"])
        assert row["decode_error"] is None
    first = rows[0]
    assert first["line_number"] == 2 and isinstance(first["colno"], int)
    tables = read_table(root / "db2luw", records="catalog_tables").to_pylist()
    assert {(t["tabschema"], t["tabname"]) for t in tables} >= {("SALES", "ACCOUNTS")}


def test_catalog_problems_are_reported_per_row(tmp_path):
    folder = tmp_path / "db2luw" / "cap" / "catalog"
    write(folder / "tables.csv", b"TABSCHEMA,TABNAME,TBSPACEID\r\nS,T,2\r\n")
    write(
        folder / "columns.csv",
        b"\xef\xbb\xbfTABSCHEMA,TABNAME,COLNAME,COLNO,TYPENAME,LENGTH,SCALE,NULLS\n"
        b'S ,T,"A\nB",x,INTEGER,4,0,N\nS,T,C,1,INTEGER,4\n',
    )
    (table_row,) = read_table(tmp_path / "db2luw", records="catalog_tables").to_pylist()
    assert "has no TABLEID column in its header row" in table_row["decode_error"]
    quoted, short = read_table(tmp_path / "db2luw", records="catalog_columns").to_pylist()
    assert "COLNO 'x' is not a whole number" in quoted["decode_error"]
    assert quoted["line_number"] == 2 and quoted["record_bytes"].count(b"\n") == 2
    assert "has 6 fields, the header row 8" in short["decode_error"]


def test_the_schema_is_one_column_per_decoded_key():
    names = [field.name for field in readers.LOG_SCHEMA]
    decoded = decode_record(h.REAL_RECORD)
    assert set(readers.RENAMED.get(k, k) for k in decoded) <= set(names)
    assert len(names) == len(set(names))
    assert readers.spark_schema(readers.LOG_SCHEMA).startswith(
        "source_system string, capture string"
    )


def test_decoded_records_keep_the_key_order_rows_are_transposed_by(capture):
    """log_batch turns each decode_record dict into a row by its values' order."""
    root, summary = capture
    table = read_table(root / "db2luw", framing=summary["framing"], byteorder=summary["byteorder"])
    for framed in table.column("record_bytes").to_pylist():
        prefix = 56 if summary["framing"] == "filter" else 8
        assert list(decode_record(framed[prefix:], summary["byteorder"])) == list(RECORD_KEYS)
