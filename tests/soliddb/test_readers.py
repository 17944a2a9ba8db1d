"""SYS_LOG exports: Parquet, CSV and JSON lines read to the same typed rows; bad rows kept."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from udfs.errors import DecodeError
from udfs.soliddb.readers import (
    READER_SCHEMA,
    csv_records,
    find_exports,
    json_lines,
    read_export_batches,
    read_sys_log,
    read_sys_log_batches,
)

from .handmade import logaddr

A1 = logaddr(0x295)
ROWS = [
    {
        "RECID": 7,
        "RECNAME": "DBE_LOGREADER_LOG_REC_TRX_START",
        "TRXID": 5,
        "STMTTRXID": 1,
        "RELID": None,
        "FLAGS": 64,
        "LOGADDR": A1,
        "DATA": None,
        "TEXTDATA": None,
    },
    {
        "RECID": None,
        "RECNAME": None,
        "TRXID": None,
        "STMTTRXID": None,
        "RELID": None,
        "FLAGS": 0,
        "LOGADDR": None,
        "DATA": None,
        "TEXTDATA": None,
    },
    {
        "RECID": 1,
        "RECNAME": "DBE_LOGREADER_LOG_REC_INSERT",
        "TRXID": 5,
        "STMTTRXID": 2,
        "RELID": 1001,
        "FLAGS": 1,
        "LOGADDR": logaddr(0x300),
        "DATA": b"\x04\x00\x00\x00\x01",
        "TEXTDATA": None,
    },
]
EXPECTED = [
    {"row_number": i, **{k.lower(): v for k, v in r.items()}, "decode_error": None}
    for i, r in enumerate(ROWS)
]


def hexed(row: dict) -> dict:
    return {k: v.hex().upper() if isinstance(v, bytes) else v for k, v in row.items()}


def write_csv(path: Path, header: str, lines: list[str]) -> Path:
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


def test_parquet(tmp_path: Path):
    path = tmp_path / "sys_log.parquet"
    schema = pa.schema(
        [
            ("RECID", pa.int32()),
            ("RECNAME", pa.string()),
            ("TRXID", pa.int32()),
            ("STMTTRXID", pa.int32()),
            ("RELID", pa.int32()),
            ("FLAGS", pa.int32()),
            ("LOGADDR", pa.binary()),
            ("DATA", pa.binary()),
            ("TEXTDATA", pa.string()),
        ]
    )
    pq.write_table(pa.Table.from_pylist(ROWS, schema=schema), path)
    assert list(read_sys_log(path)) == EXPECTED


def test_parquet_with_hex_strings_and_lower_case_names(tmp_path: Path):
    path = tmp_path / "sys_log.parquet"
    rows = [{k.lower(): v for k, v in hexed(r).items()} for r in ROWS]
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert list(read_sys_log(path)) == EXPECTED


def test_csv(tmp_path: Path):
    path = write_csv(
        tmp_path / "sys_log.csv",
        "RECID,RECNAME,TRXID,STMTTRXID,RELID,FLAGS,LOGADDR,DATA,TEXTDATA",
        [",".join("" if v is None else str(v) for v in hexed(r).values()) for r in ROWS],
    )
    assert list(read_sys_log(path)) == EXPECTED


def test_jsonl(tmp_path: Path):
    path = tmp_path / "sys_log.jsonl"
    path.write_text("".join(json.dumps(hexed(r)) + "\n" for r in ROWS) + "\n", "utf-8")
    assert list(read_sys_log(path)) == EXPECTED


def test_hex_wrappers_spaces_extra_and_missing_columns(tmp_path: Path):
    path = write_csv(
        tmp_path / "sys_log.csv",
        "flags,LogAddr,Data,EXTRA",
        [f"1,0x{A1.hex()},X'04 00 00 00 01',ignored"],
    )
    (row,) = read_sys_log(path)
    assert row["logaddr"] == A1
    assert row["data"] == b"\x04\x00\x00\x00\x01"
    assert row["recid"] is None and row["textdata"] is None
    assert row["decode_error"] is None


def test_bad_rows_are_kept_with_their_reason(tmp_path: Path):
    path = write_csv(
        tmp_path / "sys_log.csv",
        "RECID,TRXID,FLAGS,LOGADDR,DATA",
        [
            f"1,5,1,{A1.hex()},0G",  # bad hex in DATA
            "1,5,1,00FF,04",  # LOGADDR of 2 bytes
            f"x,5,1,{A1.hex()},",  # RECID not a number
            f"1,99999999999999999999,1,{A1.hex()},",  # TRXID out of range
            f"1,5,1,{A1.hex()}ABC,",  # odd number of hex digits
        ],
    )
    rows = list(read_sys_log(path))
    assert [r["row_number"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["decode_error"] for r in rows] == [
        "DATA is not hex: '0G'",
        "LOGADDR is 2 bytes, expected 20",
        "RECID 'x' is not a whole number",
        "TRXID 99999999999999999999 is out of range",
        f"LOGADDR is not hex: '{A1.hex()}ABC'",
    ]
    assert rows[1]["logaddr"] == b"\x00\xff"  # kept as read


def test_jsonl_line_that_is_not_json_is_a_row_with_a_reason(tmp_path: Path):
    path = tmp_path / "sys_log.jsonl"
    path.write_text('{"FLAGS": 0}\n{oops\n[1]\n{"RECID": "3", "TRXID": 4.0}\n', "utf-8")
    rows = list(read_sys_log(path))
    assert [r["decode_error"] for r in rows] == [
        None,
        "line 2 is not JSON: Expecting property name enclosed in double quotes",
        "line 3 is not a JSON object",
        None,
    ]
    assert (rows[3]["recid"], rows[3]["trxid"]) == (3, 4)


def test_batches_are_typed_and_numbered_across_batches(tmp_path: Path):
    path = tmp_path / "sys_log.jsonl"
    path.write_text("".join(json.dumps({"FLAGS": 0}) + "\n" for _ in range(5)), "utf-8")
    batches = list(read_sys_log_batches(path, batch_rows=2))
    assert [b.num_rows for b in batches] == [2, 2, 1]
    assert all(b.schema == READER_SCHEMA for b in batches)
    assert batches[2].column("row_number").to_pylist() == [4]


def test_format_by_suffix_and_capture_listing(tmp_path: Path):
    with pytest.raises(DecodeError, match="not a SYS_LOG export"):
        list(read_sys_log(tmp_path / "sys_log.txt"))
    for name in ("sys_log.csv", "sys_log.parquet", "notes.csv", "sys_log.txt"):
        (tmp_path / name).write_text("", "utf-8")
    assert [p.name for p in find_exports(tmp_path)] == ["sys_log.csv", "sys_log.parquet"]


def test_empty_csv_yields_nothing(tmp_path: Path):
    assert list(read_sys_log(write_csv(tmp_path / "sys_log.csv", "", []))) == []


# --- the bytes each row was read from (record_bytes in the raw table) --------------------------


def test_csv_record_bytes_are_the_rows_lines(tmp_path: Path):
    path = tmp_path / "sys_log.csv"
    lines = [
        b"\xef\xbb\xbfRECID,RECNAME,FLAGS\r\n",
        b'1,"two\r\nlines",1\r\n',
        b"\r\n",
        b'7,"a ""quoted"" name",0\r\n',
        b"12,,0",
    ]
    path.write_bytes(b"".join(lines))
    (batch,) = read_export_batches(path)
    assert batch.record_bytes.to_pylist() == [lines[1], lines[3], lines[4]]
    assert batch.rows.column("recname").to_pylist() == ["two\r\nlines", 'a "quoted" name', None]
    assert batch.rows.column("row_number").to_pylist() == [0, 1, 2]
    assert next(csv_records(path)) == b"RECID,RECNAME,FLAGS\r\n"


def test_csv_row_with_the_wrong_number_of_cells_or_bad_utf8_is_kept(tmp_path: Path):
    path = tmp_path / "sys_log.csv"
    path.write_bytes(b"RECID,FLAGS\n1,1,extra\n\xff\xfe,0\n3\n7,0\n")
    rows = list(read_sys_log(path))
    assert [r["decode_error"] for r in rows] == [
        "the row has 3 cells, the header 2",
        "the row is not UTF-8 text (invalid start byte at byte 0)",
        "the row has 1 cells, the header 2",
        None,
    ]
    assert rows[3]["recid"] == 7


def test_jsonl_record_bytes_are_the_lines_and_bad_utf8_is_a_row_error(tmp_path: Path):
    path = tmp_path / "sys_log.jsonl"
    lines = [b'{"FLAGS": 0}\n', b"\n", b'{"RECID": 1, "NOTE": "\xff"}\n', b'{"RECID": 7}']
    path.write_bytes(b"".join(lines))
    (batch,) = read_export_batches(path)
    assert batch.record_bytes.to_pylist() == [lines[0], lines[2], lines[3]]
    errors = batch.rows.column("decode_error").to_pylist()
    assert errors == [None, "line 3 is not UTF-8 text (invalid start byte)", None]


def test_parquet_record_bytes_read_back_as_the_same_rows(tmp_path: Path):
    path = tmp_path / "sys_log.parquet"
    table = pa.Table.from_pylist(ROWS)
    pq.write_table(table, path, row_group_size=2)
    batches = list(read_export_batches(path, batch_rows=10))
    lines = b"".join(b for batch in batches for b in batch.record_bytes.to_pylist())
    assert json.loads(lines.splitlines()[2])["LOGADDR"] == ROWS[2]["LOGADDR"].hex().upper()
    copy = tmp_path / "copy" / "sys_log.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(lines)
    assert list(read_sys_log(copy)) == EXPECTED


def test_parquet_row_groups_keep_the_files_row_numbers(tmp_path: Path):
    path = tmp_path / "sys_log.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS * 3), path, row_group_size=2)
    (batch,) = read_export_batches(path, row_groups=[2, 3])
    assert batch.rows.column("row_number").to_pylist() == [4, 5, 6, 7]


def test_parquet_rows_serialise_as_json_dumps_would(tmp_path: Path):
    table = pa.table(
        {
            "RECID": pa.array([1, None, 3], pa.int32()),
            "RECNAME": ['a "quoted"\nname', None, "Zoë 北京"],
            "LOGADDR": pa.array([b"\x00\xff", None, b""], pa.binary()),
            "SCORE": [1.5, None, float("inf")],
            "OK": [True, False, None],
        }
    )
    lines = json_lines(table.to_batches()[0]).to_pylist()
    expected = [
        json.dumps(
            {k: v.hex().upper() if isinstance(v, bytes) else v for k, v in row.items()},
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()
        + b"\n"
        for row in table.to_pylist()
    ]
    assert lines == expected
