"""Record framing: cut a binary file into records, streaming, without holding the file.

A *frame batch* is a chunk of the file and the start/length of each whole record in it; the
decoders work on a batch at once (numpy over the chunk) and never copy records one by one.
When the framing itself breaks (an RDW that cannot be one, a record running past the end of
the file) the rest of the file cannot be cut reliably: it comes out as one
:class:`FramingFailure`, which the readers quarantine with its reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

CHUNK_SIZE = 8 << 20
# A quarantined tail larger than this keeps only its first bytes (the file stays the truth).
MAX_QUARANTINED_BYTES = 1 << 20


@dataclass(frozen=True)
class FrameBatch:
    """Whole records inside ``buffer``; ``starts``/``lengths`` index it, framing included."""

    buffer: bytes
    file_offset: int  # file offset of buffer[0]
    starts: np.ndarray  # int64
    lengths: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.starts)


@dataclass(frozen=True)
class FramingFailure:
    """Bytes from ``offset`` to the end of the range that could not be framed, and why."""

    offset: int
    length: int
    data: bytes
    reason: str


# A length reader looks at the bytes at ``pos`` and returns the record's whole length, or a
# reason string when the bytes there cannot start a record. ``None`` = need more bytes.
LengthReader = Callable[[bytes, int, int], "int | str | None"]


def rdw_length(buf: bytes, pos: int, file_offset: int) -> int | str | None:
    """z/OS RDW: u16 big-endian length including the 4-byte RDW, then two zero bytes.

    :func:`_cut` inlines the same test for speed; this function says why a record is bad.
    """
    if pos + 4 > len(buf):
        return None
    length = buf[pos] << 8 | buf[pos + 1]
    if buf[pos + 2] or buf[pos + 3]:
        return (
            f"no RDW at offset {file_offset}: bytes 2-3 of an RDW must be x'0000', found "
            f"x'{buf[pos + 2]:02X}{buf[pos + 3]:02X}'; was the file transferred without RDWs? "
            "Download it in binary with SITE RDW"
        )
    if length <= 4:
        return f"RDW at offset {file_offset} gives record length {length}; an RDW counts itself (4)"
    return length


# db2ReadLog output buffers (specs README, Db2 LUW): each log record is preceded by the 56-byte
# db2ReadLogFilterData (framing 'filter': u64 lriType, u64 LFS, u64 LSN, 24 bytes, u32
# realLogRecLen at 48) or by an 8-byte LSN (framing 'lsn', db2ReadLogNoConn). The record starts
# with its log manager header: u32 length, u16 record type, u16 flags, u64 LSN.
DB2_PREFIX_LENGTHS = {"filter": 56, "lsn": 8}
DB2_HEADER_LENGTH = 40
# No record is longer (Db2's largest log buffer is 512 MiB; its records are far smaller): a
# longer one means the byte order setting is wrong, and is reported instead of read to EOF.
DB2_MAX_RECORD = 64 << 20


def db2_read_log_length(framing: str = "filter", byteorder: str = "little") -> LengthReader:
    """A length reader for db2ReadLog output with the ``framing`` / ``byteorder`` settings.

    Each prefix is checked against the header after it (same length and LSN); the record type
    must be below 0x0100 (every Db2 record type is), which the other byte order never gives.
    A record that does not fit says which settings the bytes do fit.
    """
    if framing not in DB2_PREFIX_LENGTHS or byteorder not in ("little", "big"):
        raise ValueError(
            f"db2luw framing must be 'filter' or 'lsn' and byteorder 'little' or 'big', "
            f"got framing={framing!r} byteorder={byteorder!r}"
        )

    def read(buf: bytes, pos: int, file_offset: int) -> int | str | None:
        found = _db2_frame(buf, pos, framing, byteorder)
        if isinstance(found, str):
            fits = [
                f"framing={f!r} byteorder={b!r}"
                for f in DB2_PREFIX_LENGTHS
                for b in ("little", "big")
                if (f, b) != (framing, byteorder) and isinstance(_db2_frame(buf, pos, f, b), int)
            ]
            hint = (
                f"the bytes fit {fits[0]}: set the db2luw options to match the capture"
                if fits
                else "check the capture file and the db2luw framing/byteorder options"
            )
            return (
                f"db2ReadLog record at offset {file_offset} does not fit framing={framing!r} "
                f"byteorder={byteorder!r} ({found}); {hint}"
            )
        return found

    return read


def _db2_frame(buf: bytes, pos: int, framing: str, byteorder: str) -> int | str | None:
    """Whole framed length at ``pos``, a reason it cannot be one, or None (need more bytes)."""
    prefix = DB2_PREFIX_LENGTHS[framing]
    at = pos + prefix  # the log manager header
    if at + 16 > len(buf):
        return None
    length = int.from_bytes(buf[at : at + 4], byteorder)
    record_type = int.from_bytes(buf[at + 4 : at + 6], byteorder)
    lsn = buf[at + 8 : at + 16]
    if framing == "filter":
        if lsn != buf[pos + 16 : pos + 24]:
            return "the filter data's LSN is not the header's"
        if int.from_bytes(buf[pos + 48 : pos + 52], byteorder) != length:
            return "realLogRecLen is not the header's record length"
    elif lsn != buf[pos : pos + 8]:
        return "the 8-byte LSN prefix is not the header's LSN"
    if record_type > 0xFF:
        return f"record type 0x{record_type:04X} is not a Db2 log record type"
    if not DB2_HEADER_LENGTH <= length <= DB2_MAX_RECORD:
        return f"header record length {length} is not between 40 and {DB2_MAX_RECORD}"
    return prefix + length


def frame_file(
    path: str | os.PathLike,
    length_reader: LengthReader,
    start: int = 0,
    end: int | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> Iterator[FrameBatch | FramingFailure]:
    """Yield batches of whole records between ``start`` and ``end`` (a record boundary or EOF).

    Records must start before ``end``; ``end`` defaults to the file size. A failure ends the
    iteration: the failure covers the rest of the range.
    """
    size = os.path.getsize(path)
    end = size if end is None else min(end, size)
    with open(path, "rb") as handle:
        handle.seek(start)
        carry = b""
        offset = start  # file offset of carry[0]
        while offset < end:
            chunk = handle.read(chunk_size)
            buf = carry + chunk if carry else chunk
            at_eof = not chunk or handle.tell() >= size
            starts, lengths, stop, failure = _cut(buf, offset, end, length_reader, at_eof)
            if starts:
                yield FrameBatch(
                    buf, offset, np.asarray(starts, np.int64), np.asarray(lengths, np.int64)
                )
            if failure is not None:
                yield _failure(handle, offset + stop, end, buf[stop:], failure)
                return
            if at_eof:
                return
            carry = buf[stop:]
            offset += stop


def _cut(
    buf: bytes, file_offset: int, end: int, length_reader: LengthReader, at_eof: bool
) -> tuple[list[int], list[int], int, str | None]:
    """Cut whole records from ``buf``; return starts, lengths, where it stopped, and a failure."""
    starts: list[int] = []
    lengths: list[int] = []
    pos = 0
    limit = end - file_offset
    size = len(buf)
    if length_reader is rdw_length:
        # Hot loop for RDWs (about 3x faster than a call per record); anything odd falls
        # through to the general loop below, which says what is wrong.
        while pos < limit and pos + 4 <= size:
            length = buf[pos] << 8 | buf[pos + 1]
            if buf[pos + 2] or buf[pos + 3] or length <= 4 or pos + length > size:
                break
            starts.append(pos)
            lengths.append(length)
            pos += length
    while pos < limit:
        length = length_reader(buf, pos, file_offset + pos)
        if isinstance(length, str):
            return starts, lengths, pos, length
        if length is None or pos + length > size:
            if at_eof:
                have = size - pos
                says = "" if length is None else f" says {length} bytes but"
                return starts, lengths, pos, (
                    f"record at offset {file_offset + pos}{says} the file ends after {have} "
                    "bytes: the file is truncated; transfer it again"
                )
            break
        starts.append(pos)
        lengths.append(length)
        pos += length
    return starts, lengths, pos, None


def _failure(handle, offset: int, end: int, have: bytes, reason: str) -> FramingFailure:
    """The unframeable tail: up to MAX_QUARANTINED_BYTES of it, with its full length."""
    length = end - offset
    keep = min(length, MAX_QUARANTINED_BYTES)
    data = have[:keep]
    if len(data) < keep:
        data += handle.read(keep - len(data))
    if length > len(data):
        reason += f" (quarantined bytes: the first {len(data)} of {length})"
    return FramingFailure(offset, length, data, reason)


def split_points(
    path: str | os.PathLike, length_reader: LengthReader, target: int
) -> list[tuple[int, int]]:
    """Record-aligned (start, end) ranges of about ``target`` bytes, for parallel reading.

    One sequential pass over the file's framing (no record is kept): a multi-GB file is split
    on the driver in seconds, with flat memory.
    """
    size = os.path.getsize(path)
    if size <= target:
        return [(0, size)]
    ranges: list[tuple[int, int]] = []
    range_start = 0
    for batch in frame_file(path, length_reader):
        if isinstance(batch, FramingFailure):
            break
        record_offsets = batch.file_offset + batch.starts
        for record_offset in record_offsets[::max(1, len(record_offsets) // 64)]:
            if record_offset - range_start >= target:
                ranges.append((range_start, int(record_offset)))
                range_start = int(record_offset)
    ranges.append((range_start, size))
    return ranges
