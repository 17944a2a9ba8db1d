"""The column-at-a-time Db2 LUW record decoder (udfs/db2luw/batch_records.py) against the
per-record one (readers.log_batch_per_record): the same rows, values and quarantine reasons, on the
generator's captures and on records built by hand at the spec's offsets."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from logmart_generators.db2luw import generate
from tests.db2luw import handmade as h
from udfs.db2luw import batch_records, readers
from udfs.db2luw.layouts import fixed_format, leading_fields
from udfs.framing import FrameBatch, db2_read_log_length, db2_resync, frame_file

SETTINGS = [(f, b) for f in ("filter", "lsn") for b in ("little", "big")]


def framed(record: bytes, bo: str, framing: str, lfs: int = 7, sqlcode: int = 0) -> bytes:
    """The db2ReadLog prefix (README: 56-byte db2ReadLogFilterData, or the 8-byte LSN)."""
    length, _, _, lsn = struct.unpack_from(bo + "IHHQ", record)
    if framing == "lsn":
        return struct.pack(bo + "Q", lsn) + record
    return struct.pack(bo + "QQQQQQIi", 1, lfs, lsn, 0, 0, 0, length, sqlcode) + record


def frame_batch(frames: list[bytes], file_offset: int = 0) -> FrameBatch:
    lengths = np.array([len(f) for f in frames], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return FrameBatch(b"".join(frames), file_offset, starts, lengths)


def both(batch: FrameBatch, framing: str, byteorder: str) -> tuple[pa.Table, pa.Table]:
    fast = list(batch_records.log_batch(batch, "c", "c/S0.log", framing, byteorder))
    slow = list(readers.log_batch_per_record(batch, "c", "c/S0.log", framing, byteorder))
    assert [b.num_rows for b in fast] == [b.num_rows for b in slow]
    for a, b in zip(fast, slow, strict=True):
        assert a.schema == b.schema
        for name in a.schema.names:
            assert a.column(name).to_pylist() == b.column(name).to_pylist(), name
        assert a.equals(b)
    return pa.Table.from_batches(fast), pa.Table.from_batches(slow)


# --- generated captures ----------------------------------------------------------------------


@pytest.mark.parametrize(("framing", "byteorder"), SETTINGS)
def test_generated_captures_decode_the_same_both_ways(framing, byteorder, tmp_path):
    generate(tmp_path, 60, 5, framing=framing, byteorder=byteorder, file_bytes=8192)
    length, resync = db2_read_log_length(framing, byteorder), db2_resync(framing, byteorder)
    rows = fast_rows = 0
    for path in sorted(tmp_path.glob("db2luw/*/S*.log")):
        for batch in frame_file(path, length, 0, path.stat().st_size, resync=resync):
            assert isinstance(batch, FrameBatch)
            both(batch, framing, byteorder)
            rows += len(batch)
            fast_rows += int(batch_records.batch_decoded(batch, framing, byteorder).sum())
    assert rows > 100
    assert fast_rows > rows // 2, "the batch path should take most of a capture's records"
    assert fast_rows < rows, "the capture's DDL, undo and other records go record by record"


def test_a_batch_larger_than_one_output_batch_keeps_the_per_record_batches(tmp_path):
    def insert(n: int) -> bytes:
        body = h.insert_body("<", 162, h.image("<", bytes([n % 256]) * 5))
        return framed(h.record("<", body, lsn=1000 + n), "<", "filter")

    frames = [insert(n) for n in range(readers.BATCH_ROWS + 7)]
    frames[readers.BATCH_ROWS + 2] = framed(h.record("<", h.dms("<", 7), lsn=5), "<", "filter")
    fast, _ = both(frame_batch(frames, 4096), "filter", "little")
    assert fast.num_rows == readers.BATCH_ROWS + 7
    assert fast.column("raw_offset")[1].as_py() == 4096 + len(frames[0])


# --- hand-built records at the spec's offsets ---------------------------------------------------


def test_the_offsets_come_from_the_construct_layouts():
    """README "Db2 LUW": log manager header u32 length @0, u16 type @4, u16 flags @6, u64 LSN @8,
    u64 LFS @16, u64 LSO @24, 6-byte TID @32, u16 log stream @38; Table 17 (insert) after the
    6-byte DMS header: u16 LRIUD flags @6, record length @8, free space @10, RID @12(6),
    record offset @18; db2ReadLogFilterData: LFS @8, LSN @16, sqlcode @52."""
    header = leading_fields("log_manager_header", "little")
    assert [(field.name, field.offset) for field in header] == [
        ("record_length", 0), ("record_type", 4), ("flags", 6), ("lsn", 8), ("lfs", 16),
        ("lso_previous", 24), ("tid", 32), ("log_stream_id", 38),
    ]  # fmt: skip
    assert {(field.kind, field.byteorder) for field in header[:6]} == {("uint", "little")}
    table = leading_fields("insert_record", "big")
    insert = {field.name: (field.offset, field.width) for field in table}
    assert insert["lriudflags"] == (6, 2) and insert["free_space"] == (10, 2)
    assert insert["rid"] == (12, 6) and insert["record_offset"] == (18, 2)
    layout = batch_records._layout("big", "filter")
    assert (layout.frame_lfs, layout.frame_lsn, layout.sqlcode) == ((8, 8), (16, 8), (52, 4))
    assert layout.header_size == fixed_format("log_manager_header", "big")[0].size == 40


def test_the_real_db2_insert_record_decodes_at_once():
    """The README's real Db2 10.x insert record (length 526, type 0x4E, TID 0000004c1a7e,
    DMS 162 on table space 2 table 1287, RID 070002000000, a 466-byte image)."""
    record = h.REAL_RECORD
    frame = framed(record, "<", "filter")
    batch = frame_batch([frame])
    assert batch_records.batch_decoded(batch, "filter", "little").tolist() == [True]
    fast, _ = both(batch, "filter", "little")
    row = fast.to_pylist()[0]
    length, rtype, flags, lsn, lfs, lso = struct.unpack_from("<IHHQQQ", record)
    assert (row["log_record_length"], row["record_type"], row["flags"]) == (length, rtype, flags)
    assert (row["lsn"], row["lfs"], row["lso_previous"]) == (lsn, lfs, lso)
    assert row["tid"] == record[32:38].hex() == "0000004c1a7e" and length == 526
    assert row["log_stream_id"] == struct.unpack_from("<H", record, 38)[0]
    assert (row["component"], row["function_identifier"], row["kind"]) == ("dms", 162, "row_insert")
    assert (row["table_space_identifier"], row["table_identifier"]) == (2, 0x0507)
    assert (row["free_space"], row["rid"], row["record_offset"]) == (0x011C, "070002000000", 300)
    assert row["after_image"] == record[60:] and len(row["after_image"]) == 466
    assert row["before_image"] is None and row["propagatable"] is True


@pytest.mark.parametrize(("framing", "byteorder"), SETTINGS)
def test_every_record_kind_of_the_batch_path_by_hand(framing, byteorder):
    bo = h.order(byteorder)
    old, new = h.image(bo, b"old row"), h.image(bo, b"the new row", outer=1)
    first = struct.pack(bo + "HHH6sH", 0x8000, len(old), 10, h.RID, 30)
    second = struct.pack(bo + "HHH6sH", 0, len(new), 9, b"\1" * 6, 31)
    update = h.dms(bo, 163) + first + old + h.dms(bo, 163) + second + new
    bodies = [
        (0x4E, h.insert_body(bo, 162, h.image(bo, b"abc"), lriud=0x2000, ts=0)),
        (0x4E, h.insert_body(bo, 161, h.image(bo, b"gone"))),
        (0x4E, update),
        (0x84, struct.pack(bo + "QH", 1_700_000_000, 7) + b"DB2INST"),
        (0x84, struct.pack(bo + "QH", 0, 8) + b"ME \0\0\0  "),
        (0x84, struct.pack(bo + "Q", 86_400)),  # non-propagatable commit: the time only
    ]
    frames = [framed(h.record(bo, body, rtype=rtype, lsn=100 + n, flags=0x0012), bo, framing)
              for n, (rtype, body) in enumerate(bodies)]  # fmt: skip
    batch = frame_batch(frames, 77)
    assert batch_records.batch_decoded(batch, framing, byteorder).all()
    rows = both(batch, framing, byteorder)[0].to_pylist()
    assert [r["kind"] for r in rows] == ["row_insert", "row_delete", "row_update"] + ["commit"] * 3
    assert rows[0]["trigger"] is True and rows[0]["catalog_table"] is True
    assert rows[1]["before_image"] == h.image(bo, b"gone") and rows[1]["after_image"] is None
    assert (rows[2]["before_image"], rows[2]["after_image"]) == (old, new)
    assert (rows[2]["rid"], rows[2]["new_rid"], rows[2]["decomposed_update"]) == (
        h.RID.hex(), "01" * 6, True)  # fmt: skip
    assert [r["commit_time"] for r in rows[3:]] == [
        "2023-11-14 22:13:20", "1970-01-01 00:00:00", "1970-01-02 00:00:00"]  # fmt: skip
    assert [r["authid"] for r in rows[3:]] == ["DB2INST", "ME", None]
    assert rows[3]["component"] == "transaction_manager" and rows[3]["lriudflags"] is None
    assert all(r["singular_transaction"] and not r["temp_table"] for r in rows)


def _odd_records(bo: str) -> list[tuple[str, bytes, str, dict]]:
    """(what, record, framing, prefix settings): records the batch path must hand back."""
    img = h.image(bo, b"abc")
    good = h.insert_body(bo, 162, img)
    short_image = h.insert_body(bo, 162, img)[:-1]
    long_image = good + b"\0"
    lying = h.dms(bo, 162) + struct.pack(bo + "HHH6sH", 0, 7, 1, h.RID, 3) + struct.pack(
        bo + "BBH", 0, 0, 2) + b"xx"  # fmt: skip
    update_wrong = (h.dms(bo, 163) + struct.pack(bo + "HHH6sH", 0, len(img), 1, h.RID, 3) + img
                    + h.dom(bo, 163)[:6] + struct.pack(bo + "HHH6sH", 0, len(img), 1, h.RID, 3)
                    + img)  # fmt: skip
    return [
        ("image one byte short", h.record(bo, short_image), {}),
        ("a byte after the image", h.record(bo, long_image), {}),
        ("image length below its header", h.record(bo, lying), {}),
        ("update whose second half is not DMS", h.record(bo, update_wrong), {}),
        ("insert without its image", h.record(bo, good[:20]), {}),
        ("compensation insert", h.record(bo, good, rtype=0x43, extension=bytes(16)), {}),
        ("undo delete", h.record(bo, h.insert_body(bo, 111, img)), {}),
        ("commit time too late", h.record(bo, struct.pack(bo + "Q", 2**62), rtype=0x84), {}),
        ("commit authid not ASCII",
         h.record(bo, struct.pack(bo + "QH", 9, 2) + "é".encode(), rtype=0x84), {}),
        ("commit authid not UTF-8",
         h.record(bo, struct.pack(bo + "QH", 9, 1) + b"\xff", rtype=0x84), {}),
        ("commit authid runs over", h.record(bo, struct.pack(bo + "QH", 9, 5) + b"AB", rtype=0x84),
         {}),
        ("commit cut in the length", h.record(bo, struct.pack(bo + "Q", 9) + b"\0", rtype=0x84),
         {}),
        ("commit without time", h.record(bo, b"\0" * 7, rtype=0x84), {}),
        ("abort", h.record(bo, struct.pack(bo + "H", 2) + b"ME", rtype=0x41), {}),
        ("LSN beyond int64", h.record(bo, good, lsn=2**63 + 1), {}),
        ("LSO beyond int64", h.record(bo, good)[:24] + b"\xff" * 8 + h.record(bo, good)[32:], {}),
        ("LFS beyond int64 in the prefix", h.record(bo, good), {"lfs": 2**63}),
        ("sqlcode", h.record(bo, good), {"sqlcode": -1}),
        ("header length disagrees", struct.pack(bo + "I", 999) + h.record(bo, good)[4:], {}),
    ]  # fmt: skip


@pytest.mark.parametrize(("framing", "byteorder"), SETTINGS)
def test_records_the_batch_path_does_not_take_keep_the_per_record_rows(framing, byteorder):
    bo = h.order(byteorder)
    # the LSN framing has no LFS or sqlcode to get wrong
    odd = [case for case in _odd_records(bo) if framing == "filter" or not case[2]]
    good = framed(h.record(bo, h.insert_body(bo, 162, h.image(bo, b"abc"))), bo, framing)
    frames = []
    for _what, record, prefix in odd:
        frames += [good, framed(record, bo, framing, **prefix)]
    batch = frame_batch(frames)
    decoded = batch_records.batch_decoded(batch, framing, byteorder)
    assert decoded[0::2].all()
    taken = [what for (what, _, _), took in zip(odd, decoded[1::2], strict=True) if took]
    assert taken == []
    fast, _ = both(batch, framing, byteorder)
    errors = fast.column("decode_error").to_pylist()
    assert errors[0::2] == [None] * len(odd)
    assert sum(error is not None for error in errors[1::2]) >= 12  # the quarantined ones


def test_an_all_fallback_batch_and_an_empty_authid():
    bo = "<"
    unknown = h.record(bo, h.dms(bo, 7), lsn=5)
    empty_authid = h.record(bo, struct.pack(bo + "QH", 9, 0), rtype=0x84)
    frames = [framed(unknown, bo, "lsn"), framed(empty_authid, bo, "lsn")]
    fast, _ = both(frame_batch(frames), "lsn", "little")
    assert fast.column("authid").to_pylist() == [None, ""]
    assert batch_records.batch_decoded(frame_batch(frames[:1]), "lsn", "little").tolist() == [False]
    both(frame_batch(frames[:1]), "lsn", "little")


def test_the_data_source_uses_the_batch_path(tmp_path: Path):
    generate(tmp_path, 20, 3, file_bytes=4096)
    path = sorted(tmp_path.glob("db2luw/*/S*.log"))[0]
    length, resync = db2_read_log_length("filter", "little"), db2_resync("filter", "little")
    (batch, *_) = list(frame_file(path, length, 0, path.stat().st_size, resync=resync))
    fast = pa.Table.from_batches(list(readers.log_batch(batch, "c", "f", "filter", "little")))
    assert fast.equals(pa.Table.from_batches(
        list(batch_records.log_batch(batch, "c", "f", "filter", "little"))))  # fmt: skip
