"""Resynchronisation after a framing failure: one lying length field loses one record.

Records are laid by hand (RDW + LLDF header LENGTH + filler; db2ReadLog filter data + log
manager header), then one length is damaged; the framing must quarantine exactly the damaged
record's bytes, with a reason that says where records start again, and frame every other one.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.db2luw import handmade as h
from udfs.framing import (
    FrameBatch,
    FramingFailure,
    db2_read_log_length,
    db2_resync,
    frame_file,
    split_points,
)
from udfs.logmaster.batch_records import data_framing
from udfs.logmaster.control import CONTROL_RDW, CONTROL_RESYNC, DOCUMENTED_LAYOUT

WIDTH = DOCUMENTED_LAYOUT.width  # 288


def lldf(n: int, data_bytes: int = 40) -> bytes:
    """An RDW'd record: header LENGTH = 288, EBCDIC blanks, then ``data_bytes`` of data."""
    body = struct.pack(">H", WIDTH) + b"\x40" * (WIDTH - 2) + bytes([n % 251]) * data_bytes
    return struct.pack(">HH", len(body) + 4, 0) + body


def frames(path: Path, reader, resync, **kwargs) -> list:
    out = []
    for item in frame_file(path, reader, resync=resync, **kwargs):
        if isinstance(item, FrameBatch):
            out += [(int(item.file_offset + s), int(n)) for s, n in zip(item.starts, item.lengths)]
        else:
            out.append(item)
    return out


def damaged(tmp_path: Path, records: list[bytes], index: int, rdw_length: int) -> Path:
    """The records with record ``index``'s RDW length replaced by ``rdw_length``."""
    records = list(records)
    records[index] = struct.pack(">H", rdw_length) + records[index][2:]
    path = tmp_path / "data"
    path.write_bytes(b"".join(records))
    return path


RECORDS = [lldf(n, 20 + n) for n in range(12)]
OFFSETS = [sum(len(r) for r in RECORDS[:n]) for n in range(len(RECORDS))]


def only_record_lost(got: list, index: int) -> FramingFailure:
    """Assert every record but ``index`` frames as written and return the one failure."""
    failures = [g for g in got if isinstance(g, FramingFailure)]
    assert len(failures) == 1
    (failure,) = failures
    assert (failure.offset, failure.length) == (OFFSETS[index], len(RECORDS[index]))
    assert failure.data[2:] == RECORDS[index][2:]  # its bytes as read (the RDW damaged)
    framed = [g for g in got if not isinstance(g, FramingFailure)]
    expected = [(o, len(r)) for n, (o, r) in enumerate(zip(OFFSETS, RECORDS)) if n != index]
    assert framed == expected
    return failure


def test_a_zero_rdw_loses_that_record_only(tmp_path):
    rdw, resync = data_framing(DOCUMENTED_LAYOUT)
    path = damaged(tmp_path, RECORDS, 4, 0)
    failure = only_record_lost(frames(path, rdw, resync), 4)
    assert failure.reason == (
        f"RDW at offset {OFFSETS[4]} gives record length 0; an RDW counts itself (4); records "
        f"start again at offset {OFFSETS[5]}: the {len(RECORDS[4])} bytes from offset "
        f"{OFFSETS[4]} are quarantined as one record and the records after them are read"
    )


def test_an_rdw_too_small_for_a_header_loses_that_record_only(tmp_path):
    rdw, resync = data_framing(DOCUMENTED_LAYOUT)
    path = damaged(tmp_path, RECORDS, 6, 40)
    failure = only_record_lost(frames(path, rdw, resync), 6)
    assert failure.reason.startswith(
        f"RDW at offset {OFFSETS[6]} gives record length 40, shorter than the 292 bytes of the "
        "smallest LLDF record (RDW and header); records start again at offset"
    )


def test_an_rdw_past_the_end_of_the_file_loses_that_record_only(tmp_path):
    rdw, resync = data_framing(DOCUMENTED_LAYOUT)
    path = damaged(tmp_path, RECORDS, 10, 0xFFF0)
    failure = only_record_lost(frames(path, rdw, resync), 10)
    assert f"says {0xFFF0} bytes but the file ends after" in failure.reason
    assert f"records start again at offset {OFFSETS[11]}, so the length field is wrong" in (
        failure.reason
    )


def test_an_rdw_with_nonzero_bytes_two_and_three_loses_that_record_only(tmp_path):
    rdw, resync = data_framing(DOCUMENTED_LAYOUT)
    records = list(RECORDS)
    records[3] = records[3][:2] + b"\x40\x40" + records[3][4:]
    path = tmp_path / "data"
    path.write_bytes(b"".join(records))
    got = frames(path, rdw, resync, chunk_size=700)  # chunks end inside records
    failures = [g for g in got if isinstance(g, FramingFailure)]
    assert [(f.offset, f.length) for f in failures] == [(OFFSETS[3], len(RECORDS[3]))]
    assert "SITE RDW" in failures[0].reason
    assert len(got) == len(RECORDS)


def test_a_truncated_last_record_is_still_called_truncated(tmp_path):
    rdw, resync = data_framing(DOCUMENTED_LAYOUT)
    path = tmp_path / "data"
    path.write_bytes(b"".join(RECORDS)[:-100])
    failure = frames(path, rdw, resync)[-1]
    assert failure.offset == OFFSETS[-1]
    assert failure.reason.endswith("the file is truncated; transfer it again")


def test_a_file_that_is_not_a_log_is_one_failure_saying_so(tmp_path):
    rdw, resync = data_framing(DOCUMENTED_LAYOUT)
    path = tmp_path / "notes.txt"
    path.write_bytes(b"These are not the logs you are looking for.\n" * 2000)
    (failure,) = frames(path, rdw, resync)
    assert (failure.offset, failure.length) == (0, path.stat().st_size)
    assert "no record starts after it: the rest of the file" in failure.reason


def test_ranges_of_a_damaged_file_frame_like_the_whole_file(tmp_path):
    rdw, resync = data_framing(DOCUMENTED_LAYOUT)
    records = [lldf(n, n % 50) for n in range(400)]
    for index in (37, 38, 150, 399):  # two in a row, one in the middle, the last
        records[index] = struct.pack(">H", 3) + records[index][2:]
    path = tmp_path / "data"
    path.write_bytes(b"".join(records))
    whole = frames(path, rdw, resync)
    failures = [g for g in whole if isinstance(g, FramingFailure)]
    assert [f.length for f in failures] == [
        len(records[37]) + len(records[38]),
        len(records[150]),
        len(records[399]),
    ]
    ranges = split_points(path, rdw, 9000, resync)
    assert len(ranges) > 5
    pieces = []
    for start, end in ranges:
        pieces += frames(path, rdw, resync, start=start, end=end, chunk_size=1000)
    assert [(p.offset, p.length) if isinstance(p, FramingFailure) else p for p in pieces] == [
        (p.offset, p.length) if isinstance(p, FramingFailure) else p for p in whole
    ]


def test_a_control_record_with_a_damaged_rdw_loses_that_record_only(tmp_path):
    bodies = [b"XTYP" + b"\x40" * 62] + [t.encode("cp037") + b"\x40" * 40 for t in
                                         ("DLDS", "DTBI", "DLCI", "DLCI", "DLGE")]  # fmt: skip
    bodies = [body if n != 2 else body.replace(b"DTBI", "DTBI".encode("cp037"))
              for n, body in enumerate(bodies)]  # fmt: skip
    records = [struct.pack(">HH", len(b) + 4, 0) + b for b in bodies]
    records[3] = b"\x00\x00\xff\xff" + records[3][4:]
    path = tmp_path / "control"
    path.write_bytes(b"".join(records))
    got = frames(path, CONTROL_RDW, CONTROL_RESYNC)
    failures = [g for g in got if isinstance(g, FramingFailure)]
    assert [(f.offset, f.length) for f in failures] == [
        (sum(map(len, records[:3])), len(records[3]))
    ]
    assert len(got) == len(records)


def filter_framed(record: bytes, bo: str = "<") -> bytes:
    lsn = struct.unpack_from(bo + "Q", record, 8)[0]
    return struct.pack(bo + "6QIi", 1, 77, lsn, 2, 0, 0, len(record), 0) + record


@pytest.mark.parametrize("field", [48, 56], ids=["realLogRecLen", "header_length"])
def test_a_db2_record_whose_length_lies_loses_that_record_only(tmp_path, field):
    records = [
        filter_framed(h.record("<", h.dms("<", 211) + bytes(n), lsn=100 + n)) for n in range(20)
    ]
    bad = bytearray(records[7])
    struct.pack_into("<I", bad, field, 0x0FFF_FFFF)  # the other length field says otherwise
    records[7] = bytes(bad)
    path = tmp_path / "S0000000.log"
    path.write_bytes(b"".join(records))
    got = frames(path, db2_read_log_length(), db2_resync(), chunk_size=300)
    failures = [g for g in got if isinstance(g, FramingFailure)]
    offset = sum(map(len, records[:7]))
    assert [(f.offset, f.length) for f in failures] == [(offset, len(records[7]))]
    assert "realLogRecLen is not the header's record length" in failures[0].reason
    assert f"records start again at offset {offset + len(records[7])}" in failures[0].reason
    assert len(got) == len(records)


def test_db2_bytes_of_the_other_byte_order_never_resynchronise(tmp_path):
    records = [filter_framed(h.record(">", h.dms(">", 211), lsn=100 + n), ">") for n in range(9)]
    path = tmp_path / "S0000000.log"
    path.write_bytes(b"".join(records))
    (failure,) = frames(path, db2_read_log_length(), db2_resync())
    assert (failure.offset, failure.length) == (0, path.stat().st_size)
    assert "the bytes fit framing='filter' byteorder='big'" in failure.reason


def test_a_damaged_lsn_prefix_loses_that_record_only(tmp_path):
    records = [h.record(">", h.dms(">", 211) + bytes(n), lsn=500 + n) for n in range(12)]
    framed = [struct.pack(">Q", 500 + n) + r for n, r in enumerate(records)]
    framed[4] = struct.pack(">Q", 1) + framed[4][8:]  # the 8-byte LSN prefix is not the header's
    path = tmp_path / "S0000000.log"
    path.write_bytes(b"".join(framed))
    got = frames(path, db2_read_log_length("lsn", "big"), db2_resync("lsn", "big"), chunk_size=90)
    failures = [g for g in got if isinstance(g, FramingFailure)]
    assert [(f.offset, f.length) for f in failures] == [(sum(map(len, framed[:4])), len(framed[4]))]
    assert "the 8-byte LSN prefix is not the header's LSN" in failures[0].reason
    assert len(got) == len(framed)
