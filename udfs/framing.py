"""Record framing: cut a binary file into records, streaming, without holding the file.

A *frame batch* is a chunk of the file and the start/length of each whole record in it; the
decoders work on a batch at once (numpy over the chunk) and never copy records one by one.
When the framing itself breaks (an RDW that cannot be one, a record running past the end of
the file) the bytes from there cannot be cut by their lengths. With a :class:`Resync` the
framing then *resynchronises*: it scans forward for the next offset where a plausible record
starts (several records in a row frame from there) and goes on; the bytes in between come out
as one :class:`FramingFailure` with its reason, which the readers quarantine as one record. So
one lying length field loses one record, not the rest of the file. Without a resync (or when
no record starts again) the failure covers the rest of the range. The scan runs only after a
failure: the good path costs nothing more.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

CHUNK_SIZE = 8 << 20
# A quarantined tail larger than this keeps only its first bytes (the file stays the truth).
MAX_QUARANTINED_BYTES = 1 << 20
# Resynchronisation: bytes scanned per read, and bytes read to check a run of records.
RESYNC_WINDOW = 1 << 20
RESYNC_CHAIN_BYTES = 256 << 10


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
    """Bytes from ``offset`` (``length`` of them) that could not be framed, and why."""

    offset: int
    length: int
    data: bytes
    reason: str


# A length reader looks at the bytes at ``pos`` and returns the record's whole length, or a
# reason string when the bytes there cannot start a record. ``None`` = need more bytes.
LengthReader = Callable[[bytes, int, int], "int | str | None"]


@dataclass(frozen=True)
class Resync:
    """How to find where records start again after bytes that cannot be framed.

    ``candidates(window)`` returns, vectorised over a numpy ``uint8`` window, the positions
    ``i`` (with ``i + lookahead <= len(window)``) whose bytes may start a record: a cheap
    necessary test of the framing and the first header bytes. A candidate is taken when the
    length reader frames ``chain`` records in a row from it, each starting at a candidate
    (fewer when they end exactly at the end of the file).
    """

    candidates: Callable[[np.ndarray], np.ndarray]
    lookahead: int
    chain: int = 3


class Rdw:
    """z/OS RDW length reader: u16 big-endian length including the 4-byte RDW, then x'0000'.

    ``min_length``: the shortest whole record the file can hold (at least 5: an RDW counts
    itself); a shorter one is a framing failure, so a length that lies low is caught at once.
    :func:`_cut` inlines the same test for speed; calling the reader says why a record is bad.
    """

    def __init__(self, min_length: int = 5, what: str = "record"):
        self.min_length = max(5, min_length)
        self.what = what

    def __call__(self, buf: bytes, pos: int, file_offset: int) -> int | str | None:
        if pos + 4 > len(buf):
            return None
        length = buf[pos] << 8 | buf[pos + 1]
        if buf[pos + 2] or buf[pos + 3]:
            return (
                f"no RDW at offset {file_offset}: bytes 2-3 of an RDW must be x'0000', found "
                f"x'{buf[pos + 2]:02X}{buf[pos + 3]:02X}'; was the file transferred without "
                "RDWs? Download it in binary with SITE RDW"
            )
        if length <= 4:
            return (
                f"RDW at offset {file_offset} gives record length {length}; an RDW counts "
                "itself (4)"
            )
        if length < self.min_length:
            return (
                f"RDW at offset {file_offset} gives record length {length}, shorter than the "
                f"{self.min_length} bytes of the smallest {self.what}"
            )
        return length

    def candidates(self, window: np.ndarray, lookahead: int) -> tuple[int, np.ndarray]:
        """(n, mask): which of the first ``n`` positions hold a plausible RDW; ``n`` leaves
        ``lookahead`` bytes after each position for the caller's own checks."""
        n = len(window) - max(lookahead, 4) + 1
        if n <= 0:
            return 0, np.zeros(0, bool)
        length = window[0:n].astype(np.int32) << 8 | window[1 : n + 1]
        mask = (window[2 : n + 2] == 0) & (window[3 : n + 3] == 0)
        mask &= length >= self.min_length
        return n, mask


rdw_length = Rdw()


# db2ReadLog output buffers (specs README, Db2 LUW): each log record is preceded by the 56-byte
# db2ReadLogFilterData (framing 'filter': u64 lriType, u64 LFS, u64 LSN, 24 bytes, u32
# realLogRecLen at 48) or by an 8-byte LSN (framing 'lsn', db2ReadLogNoConn). The record starts
# with its log manager header: u32 length, u16 record type, u16 flags, u64 LSN.
DB2_PREFIX_LENGTHS = {"filter": 56, "lsn": 8}
DB2_HEADER_LENGTH = 40
# No record is longer (Db2's largest log buffer is 512 MiB; its records are far smaller): a
# longer one means the byte order setting is wrong, and is reported instead of read to EOF.
DB2_MAX_RECORD = 64 << 20


def db2_read_log_length(framing: str = "filter", byteorder: str = "little") -> Db2LengthReader:
    """A length reader for db2ReadLog output with the ``framing`` / ``byteorder`` settings.

    Each prefix is checked against the header after it (same length and LSN); the record type
    must be below 0x0100 (every Db2 record type is), which the other byte order never gives.
    A record that does not fit says which settings the bytes do fit.
    """
    _check_db2_settings(framing, byteorder)
    return Db2LengthReader(framing, byteorder)


class Db2LengthReader:
    """The db2ReadLog length reader of one setting (see :func:`db2_read_log_length`).

    ``fields`` unpacks, at a record's start, what :func:`_db2_frame` compares (the prefix's LSN
    and realLogRecLen, the header's length, record type and LSN), so :func:`_cut` can frame the
    ordinary records in a tight loop and leave anything odd to the call, which says what is
    wrong.
    """

    def __init__(self, framing: str, byteorder: str):
        self.framing, self.byteorder = framing, byteorder
        self.prefix = DB2_PREFIX_LENGTHS[framing]
        order = "<" if byteorder == "little" else ">"
        header = "IH2x8s"  # log manager header: length, record type, (flags), LSN
        if framing == "filter":  # LSN at 16, realLogRecLen at 48 of db2ReadLogFilterData
            self.fields = struct.Struct(order + "16x8s24xI4x" + header)
        else:  # the 8-byte LSN
            self.fields = struct.Struct(order + "8s" + header)

    def __call__(self, buf: bytes, pos: int, file_offset: int) -> int | str | None:
        framing, byteorder = self.framing, self.byteorder
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

    def frame_run(self, buf: bytes, pos: int, limit: int, starts: list, lengths: list) -> int:
        """Append the records from ``pos`` that frame without a doubt; return where it stopped
        (the general loop takes over there: a bad record, or one running past the buffer)."""
        unpack, prefix, size = self.fields.unpack_from, self.prefix, len(buf)
        need = self.fields.size
        filter_framing = self.framing == "filter"
        while pos < limit and pos + need <= size:
            if filter_framing:
                lsn, real_length, length, record_type, header_lsn = unpack(buf, pos)
                if real_length != length:
                    break
            else:
                lsn, length, record_type, header_lsn = unpack(buf, pos)
            framed = prefix + length
            if (lsn != header_lsn or record_type > 0xFF or length < DB2_HEADER_LENGTH
                    or length > DB2_MAX_RECORD or pos + framed > size):  # fmt: skip
                break
            starts.append(pos)
            lengths.append(framed)
            pos += framed
        return pos


def _check_db2_settings(framing: str, byteorder: str) -> None:
    if framing not in DB2_PREFIX_LENGTHS or byteorder not in ("little", "big"):
        raise ValueError(
            f"db2luw framing must be 'filter' or 'lsn' and byteorder 'little' or 'big', "
            f"got framing={framing!r} byteorder={byteorder!r}"
        )


def db2_resync(framing: str = "filter", byteorder: str = "little") -> Resync:
    """Where a db2ReadLog record may start: the prefix agrees with the header after it
    (filter: realLogRecLen = the header's length; lsn: the 8-byte LSN = the header's LSN) and
    the header's record type is below 0x0100 in the capture's byte order."""
    _check_db2_settings(framing, byteorder)
    prefix = DB2_PREFIX_LENGTHS[framing]
    lookahead = prefix + 16
    type_high = prefix + (5 if byteorder == "little" else 4)

    def candidates(window: np.ndarray) -> np.ndarray:
        n = len(window) - lookahead + 1
        if n <= 0:
            return np.zeros(0, np.int64)
        mask = window[type_high : type_high + n] == 0
        if framing == "filter":
            pairs = [(48 + k, prefix + k) for k in range(4)]
        else:
            pairs = [(k, prefix + 8 + k) for k in range(8)]
        for a, b in pairs:
            mask &= window[a : a + n] == window[b : b + n]
        return np.flatnonzero(mask)

    return Resync(candidates, lookahead)


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
    resync: Resync | None = None,
) -> Iterator[FrameBatch | FramingFailure]:
    """Yield batches of whole records between ``start`` and ``end`` (a record boundary or EOF).

    Records must start before ``end``; ``end`` defaults to the file size. A failure is followed
    by the records from where ``resync`` finds them again (never past ``end``), else it covers
    the rest of the range and ends the iteration. The places found do not depend on
    ``start``/``chunk_size``: ranges cut at record starts of a whole-file pass frame alike.
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
                bad = offset + stop
                fd = handle.fileno()
                resume = None
                if resync is not None:
                    resume = _resume(fd, length_reader, resync, bad + 1, end, size)
                yield _failure(fd, bad, end if resume is None else resume, failure, resume)
                if resume is None:
                    return
                handle.seek(resume)
                carry, offset = b"", resume
                continue
            if at_eof:
                return
            carry = buf[stop:]
            offset += stop


@dataclass(frozen=True)
class _Broken:
    """Why framing stopped at a place; ``past_end`` = a length running past the file's end."""

    reason: str
    past_end: bool = False


def _cut(
    buf: bytes, file_offset: int, end: int, length_reader: LengthReader, at_eof: bool
) -> tuple[list[int], list[int], int, _Broken | None]:
    """Cut whole records from ``buf``; return starts, lengths, where it stopped, and a failure."""
    starts: list[int] = []
    lengths: list[int] = []
    pos = 0
    limit = end - file_offset
    size = len(buf)
    if isinstance(length_reader, Rdw):
        # Hot loop for RDWs (about 3x faster than a call per record); anything odd falls
        # through to the general loop below, which says what is wrong.
        minimum = length_reader.min_length
        while pos < limit and pos + 4 <= size:
            length = buf[pos] << 8 | buf[pos + 1]
            if buf[pos + 2] or buf[pos + 3] or length < minimum or pos + length > size:
                break
            starts.append(pos)
            lengths.append(length)
            pos += length
    elif isinstance(length_reader, Db2LengthReader):
        pos = length_reader.frame_run(buf, pos, limit, starts, lengths)
    while pos < limit:
        length = length_reader(buf, pos, file_offset + pos)
        if isinstance(length, str):
            return starts, lengths, pos, _Broken(length)
        if length is None or pos + length > size:
            if at_eof:
                have = size - pos
                says = "" if length is None else f" says {length} bytes but"
                where = f"record at offset {file_offset + pos}{says}"
                broken = _Broken(f"{where} the file ends after {have} bytes", past_end=True)
                return starts, lengths, pos, broken
            break
        starts.append(pos)
        lengths.append(length)
        pos += length
    return starts, lengths, pos, None


def _resume(
    fd: int, length_reader: LengthReader, resync: Resync, offset: int, end: int, size: int
) -> int | None:
    """The first offset in [offset, end) where ``resync.chain`` records frame in a row."""
    pos = offset
    while pos < end:
        window = np.frombuffer(os.pread(fd, RESYNC_WINDOW + resync.lookahead, pos), np.uint8)
        if not len(window):
            return None
        for candidate in resync.candidates(window).tolist():
            if candidate >= RESYNC_WINDOW or pos + candidate >= end:
                break
            if _chain_frames(fd, length_reader, resync, pos + candidate, size):
                return pos + candidate
        pos += RESYNC_WINDOW
    return None


def _chain_frames(
    fd: int, length_reader: LengthReader, resync: Resync, offset: int, size: int
) -> bool:
    """Whether ``resync.chain`` records frame in a row from ``offset`` (or fewer that end
    exactly at the end of the file)."""
    buf = os.pread(fd, RESYNC_CHAIN_BYTES, offset)
    window = np.frombuffer(buf, np.uint8)
    pos = 0
    for framed in range(resync.chain):
        if offset + pos == size:
            return framed > 0
        head = window[pos : pos + resync.lookahead]
        if len(head) < resync.lookahead:
            return framed > 0  # the bytes read end here: the run held so far
        if not len(resync.candidates(head)):
            return False
        length = length_reader(buf, pos, offset + pos)
        if not isinstance(length, int):
            return False
        if offset + pos + length > size:
            return False
        pos += length
        if pos >= len(buf):
            return True  # a record longer than the bytes read: the framing checks on
    return True


def _failure(fd: int, offset: int, until: int, broken: _Broken, resume: int | None):
    """The unframeable bytes [offset, until): up to MAX_QUARANTINED_BYTES of them, the reason
    said for a person (what, where, what to do)."""
    length = until - offset
    data = os.pread(fd, min(length, MAX_QUARANTINED_BYTES), offset)
    reason = broken.reason
    if resume is not None:
        reason += (
            f"; records start again at offset {resume}, so the length field is wrong (the "
            f"bytes were damaged): the {length} bytes from offset {offset} are quarantined as "
            "one record and the records after them are read"
            if broken.past_end
            else f"; records start again at offset {resume}: the {length} bytes from offset "
            f"{offset} are quarantined as one record and the records after them are read"
        )
    elif broken.past_end:
        reason += ": the file is truncated; transfer it again"
    else:
        reason += (
            f"; no record starts after it: the rest of the file ({length} bytes) is quarantined"
        )
    if length > len(data):
        reason += f" (quarantined bytes: the first {len(data)} of {length})"
    return FramingFailure(offset, length, data, reason)


def split_points(
    path: str | os.PathLike,
    length_reader: LengthReader,
    target: int,
    resync: Resync | None = None,
) -> list[tuple[int, int]]:
    """Record-aligned (start, end) ranges of about ``target`` bytes, for parallel reading.

    One sequential pass over the file's framing (no record is kept): a multi-GB file is split
    on the driver in seconds, with flat memory. Pass the readers' ``resync`` so the ranges
    start where their framing finds records.
    """
    size = os.path.getsize(path)
    if size <= target:
        return [(0, size)]
    ranges: list[tuple[int, int]] = []
    range_start = 0
    for batch in frame_file(path, length_reader, resync=resync):
        if isinstance(batch, FramingFailure):
            continue
        record_offsets = batch.file_offset + batch.starts
        for record_offset in record_offsets[:: max(1, len(record_offsets) // 64)]:
            if record_offset - range_start >= target:
                ranges.append((range_start, int(record_offset)))
                range_start = int(record_offset)
    ranges.append((range_start, size))
    return ranges
