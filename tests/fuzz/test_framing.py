"""Property tests of record framing (udfs/framing.py): any file is cut into whole records and
unframeable pieces that cover every byte exactly once, whatever the chunk size and however the
file is split into ranges; built files give back the records they were built from.

These check invariants only (no particular resynchronisation behaviour), so they hold for any
framing strategy that accounts for every byte.
"""

from __future__ import annotations

import itertools
import os
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.support import fuzz
from udfs.framing import (
    FrameBatch,
    FramingFailure,
    db2_read_log_length,
    frame_file,
    rdw_length,
    split_points,
)

READERS = {
    "rdw": rdw_length,
    **{
        f"db2-{framing}-{order}": db2_read_log_length(framing, order)
        for framing in ("filter", "lsn")
        for order in ("little", "big")
    },
}


def _temp_file(data: bytes) -> Iterator[Path]:
    handle, name = tempfile.mkstemp(prefix="logmart-fuzz-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    try:
        yield Path(name)
    finally:
        os.unlink(name)


def pieces(path: Path, reader, start: int = 0, end: int | None = None, chunk: int = 1 << 20):
    """(offset, length, 'record' | 'failure', bytes) of everything frame_file yields."""
    out = []
    for item in frame_file(path, reader, start, end, chunk_size=chunk):
        if isinstance(item, FramingFailure):
            assert item.reason, "a framing failure says why"
            assert len(item.data) <= item.length
            out.append((item.offset, item.length, "failure", item.data))
        else:
            assert isinstance(item, FrameBatch)
            for s, n in zip(item.starts.tolist(), item.lengths.tolist(), strict=True):
                assert n > 0
                out.append((item.file_offset + s, n, "record", item.buffer[s : s + n]))
    return out


def assert_tiles(found, start: int, end: int, data: bytes) -> None:
    """The pieces cover [start, end) in order, without gap or overlap; records hold their bytes."""
    at = start
    for offset, length, kind, raw in found:
        assert offset == at, (offset, at, kind)
        if kind == "record":
            assert raw == data[offset : offset + length]
        else:
            assert raw == data[offset : offset + len(raw)]
        at += length
    assert at == end


def rdw_records(bodies: list[bytes]) -> bytes:
    return b"".join(struct.pack(">HH", len(body) + 4, 0) + body for body in bodies)


def db2_records(bodies: list[bytes], framing: str, bo: str, lsn0: int) -> bytes:
    """db2ReadLog output: prefix + 40-byte log manager header (type 0x4E) + body."""
    order = "<" if bo == "little" else ">"
    out = b""
    for n, body in enumerate(bodies):
        lsn = lsn0 + n
        header = struct.pack(order + "IHHQQQ6sH", 40 + len(body), 0x4E, 2, lsn, 1, 0, bytes(6), 0)
        if framing == "filter":
            prefix = struct.pack(order + "QQQQQQIi", 1, 7, lsn, 0, 0, 0, 40 + len(body), 0)
        else:
            prefix = struct.pack(order + "Q", lsn)
        out += prefix + header + body
    return out


_CHUNKS = st.sampled_from([1, 3, 7, 64, 1 << 20])


@fuzz(300)
@given(st.binary(max_size=600), st.sampled_from(list(READERS)), _CHUNKS)
def test_any_bytes_are_cut_into_pieces_that_cover_the_file(data, reader, chunk):
    for path in _temp_file(data):
        found = pieces(path, READERS[reader], chunk=chunk)
        assert_tiles(found, 0, len(data), data)
        assert found == pieces(path, READERS[reader])  # the chunk size changes nothing


@fuzz(200)
@given(
    st.lists(st.binary(min_size=1, max_size=90), max_size=20),
    st.binary(max_size=12),
    st.sampled_from(list(READERS)),
    _CHUNKS,
    st.integers(0, 2**62),
)
def test_built_files_give_back_their_records(bodies, tail, reader, chunk, lsn0):
    if reader == "rdw":
        records = [rdw_records([body]) for body in bodies]
    else:
        _, framing, bo = reader.split("-")
        records = [db2_records([body], framing, bo, lsn0 + n) for n, body in enumerate(bodies)]
    data = b"".join(records) + tail
    for path in _temp_file(data):
        found = pieces(path, READERS[reader], chunk=chunk)
        assert_tiles(found, 0, len(data), data)
        assert [raw for _, _, kind, raw in found[: len(records)]] == records
        assert all(kind == "record" for _, _, kind, _ in found[: len(records)])
        if not tail:
            assert len(found) == len(records)


@fuzz(200)
@given(
    st.lists(st.binary(min_size=1, max_size=60), max_size=30),
    st.binary(max_size=40),
    st.integers(16, 400),
    st.sampled_from(list(READERS)),
)
def test_split_ranges_frame_as_the_whole_file_does(bodies, tail, target, reader):
    if reader == "rdw":
        data = rdw_records(bodies) + tail
    else:
        _, framing, bo = reader.split("-")
        data = db2_records(bodies, framing, bo, 10) + tail
    for path in _temp_file(data):
        ranges = split_points(path, READERS[reader], target)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in itertools.pairwise(ranges))
        split = [p for start, end in ranges for p in pieces(path, READERS[reader], start, end, 64)]
        assert_tiles(split, 0, len(data), data)
        whole = pieces(path, READERS[reader])
        assert [p for p in split if p[2] == "record"] == [p for p in whole if p[2] == "record"]


@fuzz(300)
@given(
    st.lists(st.binary(max_size=60), min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
    st.sampled_from(["filter", "lsn"]),
    st.sampled_from(["little", "big"]),
    _CHUNKS,
)
def test_the_db2_hot_loop_frames_as_the_reader_does(bodies, overwrites, framing, bo, chunk):
    """Db2LengthReader.frame_run (the tight loop in _cut) against the same reader called per
    record (a plain function, so _cut takes its general loop), on built files with a few bytes
    overwritten: the same records and the same failures."""
    data = bytearray(db2_records(bodies, framing, bo, 10))
    for at, value in overwrites:
        data[at % len(data)] = value
    reader = db2_read_log_length(framing, bo)

    def per_record(buf: bytes, pos: int, file_offset: int):
        return reader(buf, pos, file_offset)

    for path in _temp_file(bytes(data)):
        assert pieces(path, reader, chunk=chunk) == pieces(path, per_record, chunk=chunk)
