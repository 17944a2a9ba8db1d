"""Byte-level damage to generated captures, each step precise and named.

The fault cases (tests/faults/cases.py) start from a capture the source's generator wrote and
change it with these helpers only: cut a file at an offset, flip one bit, overwrite a field at
a spec offset, drop or repeat a record, convert a file as a text-mode transfer would. Record
walks here are written from the specs (RDW: u16 big-endian length including itself + x'0000';
db2ReadLogFilterData: 56 bytes, u32 realLogRecLen at 48, then the record whose u32 length is at
0), not with logmart's framing, so a framing bug cannot hide itself.
"""

from __future__ import annotations

import csv
import io
import struct
from dataclasses import dataclass
from pathlib import Path

# Log Master LLDF header fields (spec 003, offsets after the RDW).
LLDF_CHANGE_TYPE = 104
LLDF_UORID = 172
LLDF_SEGLEN = 182
LLDF_TOTALSEGS = 184
LLDF_SEGNUM = 186
RDW = 4
# db2ReadLogFilterData (specs README): realLogRecLen at 48; the log record follows at 56.
DB2_FILTER = 56
DB2_REAL_LENGTH = 48


@dataclass(frozen=True)
class Record:
    """A record as the file holds it: its offset and its bytes (framing included)."""

    offset: int
    data: bytes

    @property
    def end(self) -> int:
        return self.offset + len(self.data)


def rdw_records(path: Path) -> list[Record]:
    """The RDW records of a z/OS VB file, in order."""
    data = path.read_bytes()
    records, pos = [], 0
    while pos < len(data):
        length = struct.unpack_from(">H", data, pos)[0]
        assert data[pos + 2 : pos + 4] == b"\0\0" and length > 4, f"not an RDW at {pos}"
        records.append(Record(pos, data[pos : pos + length]))
        pos += length
    return records


def db2_records(path: Path, byteorder: str = "<") -> list[Record]:
    """The records of a db2ReadLog output file with filter data, in order."""
    data = path.read_bytes()
    records, pos = [], 0
    while pos < len(data):
        length = struct.unpack_from(byteorder + "I", data, pos + DB2_REAL_LENGTH)[0]
        records.append(Record(pos, data[pos : pos + DB2_FILTER + length]))
        pos += DB2_FILTER + length
    return records


def write_records(path: Path, records: list[bytes]) -> list[int]:
    """Write ``records`` back to back; returns their offsets."""
    offsets, pos = [], 0
    for record in records:
        offsets.append(pos)
        pos += len(record)
    path.write_bytes(b"".join(records))
    return offsets


def cut(path: Path, size: int) -> None:
    """Keep the first ``size`` bytes of the file (a transfer that stopped there)."""
    data = path.read_bytes()
    assert 0 <= size < len(data)
    path.write_bytes(data[:size])


def flip_bit(path: Path, offset: int, mask: int) -> tuple[int, int]:
    """XOR the byte at ``offset`` with ``mask``; returns (old, new) byte values."""
    data = bytearray(path.read_bytes())
    old = data[offset]
    data[offset] ^= mask
    path.write_bytes(bytes(data))
    return old, data[offset]


def overwrite(path: Path, offset: int, value: bytes) -> None:
    """Put ``value`` at ``offset`` (a field the spec places there)."""
    data = bytearray(path.read_bytes())
    data[offset : offset + len(value)] = value
    path.write_bytes(bytes(data))


def u16(record: Record, at: int) -> int:
    return struct.unpack_from(">H", record.data, at)[0]


def lldf_change_type(record: Record) -> str:
    return record.data[RDW + LLDF_CHANGE_TYPE : RDW + LLDF_CHANGE_TYPE + 2].decode("cp037")


def lldf_segments(record: Record) -> tuple[int, int]:
    """(TOTALSEGS, SEGNUM) of an LLDF record."""
    return u16(record, RDW + LLDF_TOTALSEGS), u16(record, RDW + LLDF_SEGNUM)


def control_type(record: Record) -> str:
    return record.data[RDW : RDW + 4].decode("cp037")


def text_transfer(path: Path) -> None:
    """What an ASCII-mode FTP get does to a VB file: RDWs dropped, each record's bytes
    translated from EBCDIC cp037 to Latin-1 and ended with CR LF."""
    lines = [r.data[RDW:].decode("cp037").encode("latin-1") + b"\r\n" for r in rdw_records(path)]
    path.write_bytes(b"".join(lines))


def csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV export."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(out.getvalue().encode("utf-8"))
