"""Log Master data files: LLDF records of a frame batch decoded at once into Arrow columns.

The header is found by its LENGTH field (``003_…``: it grows between versions); its fields come
from the layout the control file's XHDF records describe, else the documented one. DATA is the
rest of the record, or for a segment (TOTALSEGS > 1) the SEGLEN bytes after the header (README
interpretation 7); it stays inside ``record_bytes`` and is addressed by ``data_offset`` /
``data_length`` so no bytes are copied twice.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from udfs.batch import ARROW_TYPES, decode_fields, gather
from udfs.framing import FrameBatch, FramingFailure, Rdw, Resync
from udfs.logmaster.control import DOCUMENTED_HEADER, HeaderLayout
from udfs.raw_contract import COMMON_FIELDS

RDW = 4
HEADER_FIELDS = [(spec.column, ARROW_TYPES[spec.kind]) for spec in DOCUMENTED_HEADER]
DATA_FIELDS = [("data_offset", pa.int32()), ("data_length", pa.int32())]
DATA_SCHEMA = pa.schema(COMMON_FIELDS + HEADER_FIELDS + DATA_FIELDS)
SOURCE_SYSTEM = "db2zos"


def data_framing(header: HeaderLayout) -> tuple[Rdw, Resync]:
    """The RDW reader and resynchronisation of a data file whose LLDF headers are ``header``.

    A record is at least its RDW, the header LENGTH field and the header; after bytes that do
    not frame, records start again where an RDW (x'0000', a length that holds a header) is
    followed by a header LENGTH of at least the header layout's width that fits the record.
    """
    rdw = Rdw(RDW + header.width, "LLDF record (RDW and header)")

    def candidates(window: np.ndarray) -> np.ndarray:
        n, mask = rdw.candidates(window, RDW + 2)
        if not n:
            return np.zeros(0, np.int64)
        record = window[0:n].astype(np.int32) << 8 | window[1 : n + 1]
        length = window[4 : n + 4].astype(np.int32) << 8 | window[5 : n + 5]
        mask &= (length >= header.width) & (length <= record - RDW)
        return np.flatnonzero(mask)

    return rdw, Resync(candidates, RDW + 2)


def _constant(value: str, rows: int) -> pa.Array:
    return pa.array([value] * rows, pa.string())


def _record_bytes(batch: FrameBatch) -> pa.Array:
    """The batch's records as an Arrow binary column sharing the chunk's buffer."""
    first = int(batch.starts[0])
    offsets = np.append(batch.starts, batch.starts[-1] + batch.lengths[-1]) - first
    data = pa.py_buffer(batch.buffer)[first : int(offsets[-1]) + first]
    return pa.BinaryArray.from_buffers(
        pa.binary(), len(batch), [None, pa.py_buffer(offsets.astype(np.int32)), data]
    )


class _Reasons:
    """The first reason per row why it cannot be decoded."""

    def __init__(self, rows: int):
        self.text: list[str | None] = [None] * rows
        self.bad = np.zeros(rows, bool)

    def add(self, mask: np.ndarray, reason) -> None:
        for row in np.flatnonzero(mask & ~self.bad):
            self.text[row] = reason(row) if callable(reason) else reason
        self.bad |= mask


def decode_data_batch(
    batch: FrameBatch, header: HeaderLayout, codec: str, capture: str, source_file: str
) -> pa.RecordBatch:
    """Decode every LLDF record of a frame batch; undecodable rows carry their reason."""
    rows = len(batch)
    buffer = np.frombuffer(batch.buffer, np.uint8)
    body_starts = batch.starts + RDW
    body_lengths = batch.lengths - RDW
    offsets = batch.file_offset + batch.starts
    reasons = _Reasons(rows)
    width = header.width
    short = body_lengths < width
    reasons.add(
        short,
        lambda r: (
            f"LLDF record at offset {offsets[r]} is {body_lengths[r]} bytes, shorter "
            f"than the {width}-byte header ({header.source} layout)"
        ),
    )
    # Short rows read past their end (gather clips to the buffer); they are flagged above.
    headers = gather(buffer, body_starts, width)
    columns, problems = decode_fields(headers, list(header.fields), codec)
    for mask, reason in problems:
        reasons.add(mask, lambda r, why=reason: f"LLDF record at offset {offsets[r]}: {why}")
    data_offset, data_length = _data_slice(columns, body_lengths, width, offsets, reasons)
    arrays = {
        "source_system": _constant(SOURCE_SYSTEM, rows),
        "capture": _constant(capture, rows),
        "source_file": _constant(source_file, rows),
        "raw_offset": pa.array(offsets, pa.int64()),
        "record_length": pa.array(batch.lengths, pa.int64()),
        "record_bytes": _record_bytes(batch),
        "decode_error": pa.array(reasons.text, pa.string()),
        "data_offset": pa.array(data_offset, pa.int32()),
        "data_length": pa.array(data_length, pa.int32()),
    }
    for name, kind in HEADER_FIELDS:
        arrays[name] = columns.get(name, pa.nulls(rows, kind))
    return pa.RecordBatch.from_arrays([arrays[f.name] for f in DATA_SCHEMA], schema=DATA_SCHEMA)


def _data_slice(columns, body_lengths, width, offsets, reasons) -> tuple[np.ndarray, np.ndarray]:
    """Where DATA starts in ``record_bytes`` and how long this record's slice of it is."""
    rows = len(body_lengths)
    zeros = np.zeros(rows, np.int64)
    length = _ints(columns.get("length"), zeros)
    seglen = _ints(columns.get("seglen"), zeros)
    totalsegs = _ints(columns.get("totalsegs"), zeros)
    bad_length = (length < width) | (length > body_lengths)
    reasons.add(
        bad_length,
        lambda r: (
            f"LLDF record at offset {offsets[r]}: header LENGTH {length[r]} must be between "
            f"{width} (the header layout) and the record's {body_lengths[r]} bytes"
        ),
    )
    rest = body_lengths - length
    segmented = totalsegs > 1
    bad_seglen = segmented & ~bad_length & (seglen > rest)
    reasons.add(
        bad_seglen,
        lambda r: (
            f"LLDF segment at offset {offsets[r]}: SEGLEN {seglen[r]} exceeds the "
            f"{rest[r]} bytes after the header"
        ),
    )
    data_length = np.where(segmented, seglen, rest)
    data_length = np.where(reasons.bad, 0, data_length)
    return RDW + np.where(reasons.bad, 0, length), np.maximum(data_length, 0)


def _ints(array: pa.Array | None, default: np.ndarray) -> np.ndarray:
    if array is None:
        return default
    return array.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


FRAMES_SCHEMA = pa.schema(COMMON_FIELDS)


def frames_batch(batch: FrameBatch, capture: str, source_file: str) -> pa.RecordBatch:
    """The records of a batch, framed but not decoded."""
    rows = len(batch)
    arrays = [
        _constant(SOURCE_SYSTEM, rows),
        _constant(capture, rows),
        _constant(source_file, rows),
        pa.array(batch.file_offset + batch.starts, pa.int64()),
        pa.array(batch.lengths, pa.int64()),
        _record_bytes(batch),
        pa.nulls(rows, pa.string()),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=FRAMES_SCHEMA)


def failure_batch(failure: FramingFailure, capture: str, source_file: str) -> pa.RecordBatch:
    """One quarantined row for bytes that could not be framed into records."""
    row = {f.name: None for f in DATA_SCHEMA}
    row.update(
        source_system=SOURCE_SYSTEM,
        capture=capture,
        source_file=source_file,
        raw_offset=failure.offset,
        record_length=failure.length,
        record_bytes=failure.data,
        decode_error=failure.reason,
    )
    return pa.RecordBatch.from_pylist([row], schema=DATA_SCHEMA)
