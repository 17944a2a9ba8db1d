"""Db2 LUW log records decoded column-at-a-time: a frame batch's common records in numpy.

:func:`log_batch` gives the same rows as :func:`udfs.db2luw.readers.log_batch_per_record`
(same schema, values and quarantine reasons), faster: the records the batch path knows — normal
inserts and deletes (DMS 162/161), updates (163) and commits (with or without an ASCII authid)
whose lengths all add up — have each field read for every record at once (:func:`udfs.batch.uints`)
from the fixed offsets of the construct layouts (:func:`udfs.db2luw.layouts.leading_fields`, the
field table of :func:`udfs.batch.layout_fields`, so the offsets live once, in
:mod:`udfs.db2luw.layouts`). Every other record, and any record with a doubtful byte (a length
that does not add up, a value beyond a signed 64-bit column, a non-zero sqlcode, a non-ASCII
authid), goes through the per-record decoder unchanged: the batch path only ever takes records
whose per-record decoding cannot fail, so the quarantine reasons stay the per-record ones.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs import batch_values as bv
from udfs.batch import matrix_ints, uints
from udfs.db2luw import readers
from udfs.db2luw.layouts import fixed_format, leading_fields
from udfs.db2luw.records import DMS_FUNCTIONS, HEADER_FLAGS, LRIUD_FLAGS
from udfs.framing import DB2_PREFIX_LENGTHS, FrameBatch

NORMAL, COMMIT = 0x004E, 0x0084
DMS_COMPONENT = 1
INSERT_LIKE = {162: "after_image", 161: "before_image"}  # Table 17: the image's column
UPDATE = 163
_MAX_COMMIT_SECONDS = 253402300799  # 9999-12-31 23:59:59 UTC: datetime's last second
_HIGH_BIT = np.uint64(1 << 63)


def _field(layout: str, byteorder: str, name: str, occurrence: int = 0) -> tuple[int, int]:
    """(offset, width) of field ``name`` (its n-th occurrence) of a layout."""
    found = [(f.offset, f.width) for f in leading_fields(layout, byteorder) if f.name == name]
    return found[occurrence]


class _Reader:
    """Unsigned integers and bytes at per-row positions of one buffer, for every row at once."""

    def __init__(self, buffer: bytes, byteorder: str):
        self.bytes = np.frombuffer(buffer, np.uint8)
        self.byteorder = byteorder
        self.little = byteorder == "little"
        self.last = max(len(self.bytes) - 1, 0)

    def uint(self, at: np.ndarray, width: int) -> np.ndarray:
        """The ``width``-byte unsigned integers at positions ``at`` (uint64; out-of-buffer
        positions read the last byte: callers mask such rows out)."""
        return uints(self.bytes, at, width, self.byteorder)

    def slices(self, at: np.ndarray, lengths: np.ndarray, valid: np.ndarray | None = None):
        """A binary Arrow array of ``lengths`` bytes from each ``at`` (null where not valid)."""
        return bv.slices(self.bytes, at, lengths, valid)


class _Window:
    """The ``width`` bytes at each row's position, gathered once; fields are read from it."""

    def __init__(self, reader: _Reader, at: np.ndarray, width: int):
        index = np.minimum(at[:, None] + np.arange(width, dtype=np.int64), reader.last)
        self.matrix = reader.bytes[index]
        self.byteorder = reader.byteorder

    def uint(self, offset: int, width: int) -> np.ndarray:
        """The unsigned integer field at ``offset`` of every row (uint64)."""
        return matrix_ints(self.matrix, offset, width, self.byteorder)

    @classmethod
    def of(cls, matrix: np.ndarray, byteorder: str) -> _Window:
        """A window over an already gathered byte matrix."""
        window = cls.__new__(cls)
        window.matrix, window.byteorder = matrix, byteorder
        return window

    def hex(self, offset: int, width: int, valid: np.ndarray | None = None) -> pa.Array:
        return _hex_text(self.matrix[:, offset : offset + width], valid)


_LOWER_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
_HEX_PAIRS = np.ascontiguousarray(
    np.stack([_LOWER_HEX[np.arange(256) >> 4], _LOWER_HEX[np.arange(256) & 15]], 1)
)


def _hex_text(matrix: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """Lower-case hex text (``bytes.hex()``) of each row of a byte matrix."""
    n, width = matrix.shape
    digits = _HEX_PAIRS[matrix].reshape(n, 2 * width)
    offsets = np.arange(0, (n + 1) * 2 * width, 2 * width, dtype=np.int32)
    bitmap = None
    if valid is not None:
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())
    return pa.Array.from_buffers(
        pa.string(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(digits.tobytes())]
    )


def _record_bytes(reader: _Reader, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """The framed records as a binary column; zero-copy when they follow each other."""
    if len(starts) and np.array_equal(starts[1:], starts[:-1] + lengths[:-1]):
        first = int(starts[0])
        offsets = np.append(starts, starts[-1] + lengths[-1]) - first
        data_buffer = pa.py_buffer(reader.bytes)[first : int(offsets[-1]) + first]
        return pa.Array.from_buffers(
            pa.binary(), len(starts), [None, pa.py_buffer(offsets.astype(np.int32)), data_buffer]
        )
    return reader.slices(starts, lengths)


def _constant(value: str, rows: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, pa.string()), rows)


def _labels(codes: np.ndarray, labels: list) -> pa.Array:
    """Text of each row's code (an index into ``labels``; a None label is a null)."""
    return pa.array(labels, pa.string()).take(pa.array(codes, pa.int32()))


def _masked(values: np.ndarray, valid: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    return pa.array(values.astype(arrow_type.to_pandas_dtype()), arrow_type, mask=~valid)


class _Layout:
    """The offsets the batch path reads, from the construct layouts of one byte order."""

    def __init__(self, byteorder: str, framing: str):
        self.prefix = DB2_PREFIX_LENGTHS[framing]
        self.framing = framing
        header = "log_manager_header"
        self.header_size = fixed_format(header, byteorder)[0].size
        self.length = _field(header, byteorder, "record_length")
        self.type = _field(header, byteorder, "record_type")
        self.flags = _field(header, byteorder, "flags")
        self.lsn = _field(header, byteorder, "lsn")
        self.lfs = _field(header, byteorder, "lfs")
        self.lso_previous = _field(header, byteorder, "lso_previous")
        self.tid = _field(header, byteorder, "tid")
        self.stream = _field(header, byteorder, "log_stream_id")
        if framing == "filter":  # recordLRIType1: part1 the LFS, part2 the LSN
            filter_data = "db2_read_log_filter_data"
            self.frame_lfs = _field(filter_data, byteorder, "part1")
            self.frame_lsn = _field(filter_data, byteorder, "part2")
            self.sqlcode = _field(filter_data, byteorder, "sqlcode")
        else:
            self.frame_lsn = _field("lsn_prefix", byteorder, "lsn")
        row = "insert_record"
        self.row_size = fixed_format(row, byteorder)[0].size
        self.component = _field(row, byteorder, "component_identifier")
        self.function = _field(row, byteorder, "function_identifier")
        self.table_space = _field(row, byteorder, "table_space_identifier")
        self.table = _field(row, byteorder, "table_identifier")
        self.lriud = _field(row, byteorder, "lriudflags")
        self.free_space = _field(row, byteorder, "free_space")
        self.rid = _field(row, byteorder, "rid")
        self.record_offset = _field(row, byteorder, "record_offset")
        self.image_header_size = fixed_format("record_header", byteorder)[0].size
        self.image_length = _field("record_header", byteorder, "record_length")
        self.commit_time = _field("commit_time_only", byteorder, "commit_time")
        self.commit_size = fixed_format("commit_time_only", byteorder)[0].size
        self.authid_length = _field("normal_abort", byteorder, "authid_length")


@functools.cache
def _layout(byteorder: str, framing: str) -> _Layout:
    return _Layout(byteorder, framing)


def log_batch(
    batch: FrameBatch, capture: str, source_file: str, framing: str, byteorder: str
) -> Iterator[pa.RecordBatch]:
    """The rows of :func:`udfs.db2luw.readers.log_batch_per_record`, in the same batches."""
    for first in range(0, len(batch), readers.BATCH_ROWS):
        part = FrameBatch(
            batch.buffer,
            batch.file_offset,
            batch.starts[first : first + readers.BATCH_ROWS],
            batch.lengths[first : first + readers.BATCH_ROWS],
        )
        yield _chunk(part, capture, source_file, framing, byteorder)


def batch_decoded(batch: FrameBatch, framing: str, byteorder: str) -> np.ndarray:
    """Which rows of ``batch`` the batch path decodes itself (the rest go record by record)."""
    reader = _Reader(batch.buffer, byteorder)
    starts, lengths = batch.starts.astype(np.int64), batch.lengths.astype(np.int64)
    return _Fast(reader, _layout(byteorder, framing), starts, lengths).ok


def _chunk(
    batch: FrameBatch, capture: str, source_file: str, framing: str, byteorder: str
) -> pa.RecordBatch:
    layout = _layout(byteorder, framing)
    reader = _Reader(batch.buffer, byteorder)
    starts = batch.starts.astype(np.int64)
    lengths = batch.lengths.astype(np.int64)
    fast = _Fast(reader, layout, starts, lengths)
    slow = np.flatnonzero(~fast.ok)
    if len(slow) == len(starts):
        return _per_record(batch, slow, capture, source_file, framing, byteorder)
    fast_rows = fast.batch(batch, capture, source_file, framing, byteorder)
    if not len(slow):
        return fast_rows
    slow_rows = _per_record(batch, slow, capture, source_file, framing, byteorder)
    order = np.concatenate([np.flatnonzero(fast.ok), slow])
    table = pa.Table.from_batches([fast_rows, slow_rows]).take(np.argsort(order, kind="stable"))
    return table.combine_chunks().to_batches()[0]


def _per_record(
    batch: FrameBatch, rows: np.ndarray, capture: str, source_file: str, framing: str,
    byteorder: str,
) -> pa.RecordBatch:  # fmt: skip
    """Rows ``rows`` of the batch through the per-record decoder (``readers._log_row``)."""
    prefix = readers._Prefix(framing, byteorder)
    starts, lengths = batch.starts.tolist(), batch.lengths.tolist()
    values = [readers._log_row(batch, starts[i], lengths[i], prefix) for i in rows.tolist()]
    return readers._log_arrow(values, capture, source_file, framing, byteorder)


class _Fast:
    """Which rows of a chunk the batch path decodes, and their columns."""

    def __init__(self, reader: _Reader, layout: _Layout, starts: np.ndarray, lengths: np.ndarray):
        self.reader, self.layout = reader, layout
        record = starts + layout.prefix  # the log manager header
        size = lengths - layout.prefix  # the log record's length
        prefix = _Window(reader, starts, layout.prefix)
        self.head = head = _Window(reader, record, layout.header_size)
        ok = size >= layout.header_size
        ok &= head.uint(*layout.length) == size.astype(np.uint64)
        frame_lsn = prefix.uint(*layout.frame_lsn)
        ok &= frame_lsn < _HIGH_BIT
        if layout.framing == "filter":
            frame_lfs = prefix.uint(*layout.frame_lfs)
            ok &= frame_lfs < _HIGH_BIT
            ok &= prefix.uint(*layout.sqlcode) == 0
            self.frame_lfs = frame_lfs
        self.frame_lsn = frame_lsn
        rtype = head.uint(*layout.type)
        self.flags = head.uint(*layout.flags)
        self.lsn = head.uint(*layout.lsn)
        self.lfs = head.uint(*layout.lfs)
        self.lso_previous = head.uint(*layout.lso_previous)
        ok &= (self.lsn < _HIGH_BIT) & (self.lfs < _HIGH_BIT) & (self.lso_previous < _HIGH_BIT)
        body = record + layout.header_size
        body_size = size - layout.header_size
        self.rtype = rtype
        # the DMS row fields and the image's record header, or a commit's time and authid length
        image_length_at = layout.row_size + layout.image_length[0]
        self.rows = rows = _Window(reader, body, layout.row_size + layout.image_header_size)

        # normal records: DMS insert/delete (Table 17) and update (Table 22)
        component = rows.uint(*layout.component)
        function = rows.uint(*layout.function)
        dms = (rtype == NORMAL) & (component == DMS_COMPONENT) & (body_size >= layout.row_size)
        insert_like = dms & np.isin(function, list(INSERT_LIKE))
        update = dms & (function == UPDATE)
        first_image = body + layout.row_size
        first_length = rows.uint(image_length_at, layout.image_length[1]).astype(np.int64)
        image_fits = body_size >= layout.row_size + layout.image_header_size
        image_fits &= first_length >= layout.image_header_size
        insert_like &= image_fits & (layout.row_size + first_length == body_size)
        second = first_image + first_length  # the update's second DMS header
        second_size = body_size - layout.row_size - first_length
        update &= image_fits & (second_size >= layout.row_size + layout.image_header_size)
        # only updates need their second half: gather it for those rows alone
        self.update_rows = np.flatnonzero(update)
        self.second_half = half = _Window(
            reader, second[self.update_rows], layout.row_size + layout.image_header_size
        )
        second_dms = np.zeros(len(starts), bool)
        second_dms[self.update_rows] = half.uint(*layout.component) == DMS_COMPONENT
        update &= second_dms
        second_image = second + layout.row_size
        second_length = np.zeros(len(starts), np.int64)
        second_length[self.update_rows] = half.uint(image_length_at, layout.image_length[1])
        update &= second_length >= layout.image_header_size
        update &= layout.row_size + second_length == second_size

        # commits: the 8-byte time, then (optionally) a u16 authid length and the authid
        commit = (rtype == COMMIT) & (body_size >= layout.commit_size)
        seconds = rows.uint(*layout.commit_time)
        commit &= seconds <= _MAX_COMMIT_SECONDS
        has_authid = commit & (body_size > layout.commit_size)
        authid_at = body + layout.commit_size
        authid_length = rows.uint(layout.commit_size + layout.authid_length[0],
                                  layout.authid_length[1]).astype(np.int64)  # fmt: skip
        authid_start = authid_at + layout.authid_length[1]
        fits = body_size == layout.commit_size + layout.authid_length[1] + authid_length
        commit &= ~has_authid | fits
        has_authid &= commit
        ascii_ok = self._ascii(authid_start, np.where(has_authid, authid_length, 0))
        commit &= ascii_ok
        has_authid &= ascii_ok

        self.ok = ok & (insert_like | update | commit)
        keep = self.ok
        self.n = int(keep.sum())
        self.keep = keep
        self.insert_like, self.update, self.commit = insert_like[keep], update[keep], commit[keep]
        self.function = function[keep]
        self.seconds = seconds[keep]
        self.has_authid = has_authid[keep]
        self.authid = (authid_start[keep], authid_length[keep])
        self.first_image = (first_image[keep], first_length[keep])
        self.second_image = (second_image[keep], second_length[keep])

    def _ascii(self, at: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Rows whose ``lengths`` bytes from ``at`` are all ASCII (or empty)."""
        lengths = np.maximum(lengths, 0)
        owner = np.repeat(np.arange(len(at)), lengths)
        offsets = np.zeros(len(at) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        index = np.repeat(at - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
        index = np.minimum(index, self.reader.last)
        non_ascii = self.reader.bytes[index] >= 0x80
        ok = np.ones(len(at), bool)
        ok[owner[non_ascii]] = False
        return ok

    def batch(
        self, batch: FrameBatch, capture: str, source_file: str, framing: str, byteorder: str
    ) -> pa.RecordBatch:
        layout, reader, keep, n = self.layout, self.reader, self.keep, self.n
        starts, lengths = batch.starts[keep].astype(np.int64), batch.lengths[keep].astype(np.int64)
        head = self.head.matrix[keep]
        row = self.insert_like | self.update
        commit = self.commit
        int64, int32 = pa.int64(), pa.int32()
        columns: dict[str, pa.Array] = {
            "source_system": _constant(readers.SOURCE_SYSTEM, n),
            "capture": _constant(capture, n),
            "source_file": _constant(source_file, n),
            "raw_offset": pa.array(batch.file_offset + starts, int64),
            "record_length": pa.array(lengths, int64),
            "record_bytes": _record_bytes(reader, starts, lengths),
            "decode_error": pa.nulls(n, pa.string()),
            "framing": _constant(framing, n),
            "byteorder": _constant(byteorder, n),
            "prefix_length": pa.array([layout.prefix] * n, int32),
            "frame_lsn": pa.array(self.frame_lsn[keep].astype(np.int64), int64),
            "frame_lfs": (
                pa.array(self.frame_lfs[keep].astype(np.int64), int64)
                if framing == "filter"
                else pa.nulls(n, int64)
            ),
            "frame_sqlcode": pa.array(np.zeros(n, np.int32), int32),
            # log manager header
            "log_record_length": pa.array(lengths - layout.prefix, int64),
            "record_type": pa.array(self.rtype[keep].astype(np.int32), int32),
            "record_type_name": _labels(commit.astype(np.int32), ["normal", "normal_commit"]),
            "flags": pa.array(self.flags[keep].astype(np.int32), int32),
            "lsn": pa.array(self.lsn[keep].astype(np.int64), int64),
            "lfs": pa.array(self.lfs[keep].astype(np.int64), int64),
            "lso_previous": pa.array(self.lso_previous[keep].astype(np.int64), int64),
            "tid": _hex_text(head[:, layout.tid[0] : sum(layout.tid)]),
            "log_stream_id": pa.array(self.head.uint(*layout.stream)[keep].astype(np.int32), int32),
            "header_length": pa.array(np.full(n, layout.header_size, np.int32), int32),
        }
        flags = self.flags[keep]
        for name, bit in HEADER_FLAGS.items():
            columns[name] = pa.array((flags & np.uint64(bit)) != 0, pa.bool_())
        rows = self.rows.matrix[keep]
        columns.update(self._component_columns(rows, row, commit))
        columns.update(self._row_columns(rows, row))
        columns.update(self._commit_columns(commit))
        arrays = [
            columns[field.name] if field.name in columns else pa.nulls(n, field.type)
            for field in readers.LOG_SCHEMA
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=readers.LOG_SCHEMA)

    def _component_columns(self, rows, row, commit) -> dict[str, pa.Array]:
        layout, n = self.layout, self.n
        u = _Window.of(rows, self.head.byteorder).uint
        function = self.function.astype(np.int64)
        # 0 commit, 1 insert, 2 delete, 3 update
        code = np.where(commit, 0, np.where(function == 162, 1, np.where(function == 161, 2, 3)))
        names = [None, *(DMS_FUNCTIONS[f][0] for f in (162, 161, 163))]
        kinds = ["commit", *(DMS_FUNCTIONS[f][1] for f in (162, 161, 163))]
        table_space = u(*layout.table_space).astype(np.int32)
        table = u(*layout.table).astype(np.int32)
        return {
            "component": _labels(np.where(commit, 0, 1), ["transaction_manager", "dms"]),
            "component_identifier": _masked(np.full(n, DMS_COMPONENT), row, pa.int32()),
            "function_identifier": _masked(function, row, pa.int32()),
            "function_name": _labels(code, names),
            "kind": _labels(code, kinds),
            "table_space_identifier": _masked(table_space, row, pa.int32()),
            "table_identifier": _masked(table, row, pa.int32()),
            "catalog_table": _masked(table_space == 0, row, pa.bool_()),
        }

    def _row_columns(self, rows, row) -> dict[str, pa.Array]:
        layout, reader = self.layout, self.reader
        fields = _Window.of(rows, self.head.byteorder)
        lriud = fields.uint(*layout.lriud)
        columns = {"lriudflags": _masked(lriud, row, pa.int32())}
        for name, bit in LRIUD_FLAGS.items():
            columns[name] = _masked((lriud & np.uint64(bit)) != 0, row, pa.bool_())
        free = fields.uint(*layout.free_space)
        offset = fields.uint(*layout.record_offset)
        rid_at, rid_end = layout.rid[0], sum(layout.rid)
        new_rids = np.zeros((len(self.keep), layout.rid[1]), np.uint8)
        new_rids[self.update_rows] = self.second_half.matrix[:, rid_at:rid_end]
        function = self.function
        first_at, first_length = self.first_image
        second_at, second_length = self.second_image
        before = row & (function != 162)  # delete's image, or the update's old one
        after = row & (function != 161)
        after_at = np.where(self.update, second_at, first_at)
        after_length = np.where(self.update, second_length, first_length)
        columns.update(
            rid=fields.hex(rid_at, layout.rid[1], row),
            new_rid=_hex_text(new_rids[self.keep], self.update),
            free_space=_masked(free, row, pa.int32()),
            record_offset=_masked(offset, row, pa.int32()),
            row_count=_masked(np.ones(self.n), row, pa.int32()),
            before_image=reader.slices(first_at, first_length, before),
            after_image=reader.slices(after_at, after_length, after),
        )
        return columns

    def _commit_columns(self, commit) -> dict[str, pa.Array]:
        seconds = self.seconds.astype(np.int64)
        rows = np.flatnonzero(commit)
        stamps = np.datetime_as_string(seconds[rows].astype("datetime64[s]"))
        texts = pc.replace_substring(pa.array(stamps, pa.string()), "T", " ")
        which = np.full(self.n, len(rows), np.int32)  # the last entry: a null
        which[rows] = np.arange(len(rows), dtype=np.int32)
        texts = pa.concat_arrays([texts, pa.nulls(1, pa.string())]).take(pa.array(which))
        at, length = self.authid
        authid = self.reader.slices(at, length, self.has_authid).cast(pa.string())
        return {
            "commit_time_epoch": _masked(seconds, commit, pa.int64()),
            "commit_time": texts,
            "authid": pc.utf8_rtrim(authid, characters=" \x00"),
        }
