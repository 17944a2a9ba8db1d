"""Db2 LUW capture files as Arrow record batches: framed log records and catalog export rows.

:func:`log_batch` turns a frame batch of a db2ReadLog output file into one row per log record:
the raw contract columns (``docs/architecture.md``), the framing prefix, and every key of
:func:`udfs.db2luw.records.decode_record` as a typed column (one flat schema for every record
type; ``None`` where a field does not apply). Row images stay bytes (``before_image`` /
``after_image``); an insert multiple records (167) keeps all its images in the array columns
``images`` / ``rids`` (its ``after_image`` / ``rid`` repeat the first), which the dbt models
explode into one change per contained record. Decoding them needs the table layout in force at
the record's LSN: that is the SQL UDFs' job (:mod:`udfs.db2luw.functions`).

:func:`catalog_batch` reads a ``tables.csv`` / ``columns.csv`` catalog export (header row) into
typed rows; a row that cannot be read carries its reason in ``decode_error``.
"""

from __future__ import annotations

import csv
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from udfs.db2luw.records import HEADER_FLAGS, LRIUD_FLAGS, RECORD_KEYS, decode_record
from udfs.errors import DecodeError
from udfs.framing import DB2_PREFIX_LENGTHS, FrameBatch, FramingFailure
from udfs.raw_contract import COMMON_FIELDS

SOURCE_SYSTEM = "db2luw"
BATCH_ROWS = 8192

FRAMING_FIELDS = [
    ("framing", pa.string()),  # the settings the file was read with
    ("byteorder", pa.string()),
    ("prefix_length", pa.int32()),
    ("frame_lsn", pa.int64()),  # db2ReadLogFilterData recordLRIType1 part2, or the 8-byte LSN
    ("frame_lfs", pa.int64()),  # recordLRIType1 part1 (filter framing only)
    ("frame_sqlcode", pa.int32()),  # non-zero: Db2 could not decompress the record
]
COLUMN_DESCRIPTOR = pa.struct(
    [
        ("field_type", pa.int32()),
        ("type_name", pa.string()),
        ("length", pa.int32()),
        ("precision", pa.int32()),
        ("scale", pa.int32()),
        ("null_flag", pa.int32()),
        ("nullable", pa.bool_()),
        ("compress_system_default", pa.bool_()),
        ("field_offset", pa.int32()),
        ("lob_length", pa.int64()),
        ("lob_inline_length", pa.int32()),
        ("lob_logged", pa.bool_()),
    ]
)
_BIG = (
    "lsn", "lfs", "lso_previous", "compensation_lso", "extra_lso", "commit_time_epoch",
    "first_page_of_the_block", "pool_page_number", "file_create_lsn", "alter_bit_mask",
    "alter_bit_values", "index_root_page", "statement_text_left", "statement_text_length",
)  # fmt: skip
_TEXT = ("record_type_name", "tid", "component", "function_name", "kind", "commit_time", "authid",
         "rid", "new_rid", "partition_action_name", "note")  # fmt: skip
_BOOL = (*HEADER_FLAGS, *LRIUD_FLAGS, "catalog_table")
_SPECIAL = {
    "before_image": pa.binary(),
    "after_image": pa.binary(),
    "payload": pa.binary(),
    "images": pa.list_(pa.binary()),
    "rids": pa.list_(pa.string()),
    "altered_attributes": pa.list_(pa.string()),
    "attributes_on": pa.list_(pa.string()),
    "old_columns": pa.list_(COLUMN_DESCRIPTOR),
    "new_columns": pa.list_(COLUMN_DESCRIPTOR),
    "ddl_entries": pa.list_(pa.struct([("entry_type", pa.int32()), ("entry_text", pa.string())])),
    "statement_text": pa.binary(),
}
# decode_record's 'record_length' is the log record's own length: the contract's
# record_length is the framed length (prefix included), so the header field is renamed.
RENAMED = {"record_length": "log_record_length"}


def _record_type(key: str) -> pa.DataType:
    if key in _SPECIAL:
        return _SPECIAL[key]
    if key in _BIG or key == "record_length":
        return pa.int64()
    if key in _TEXT:
        return pa.string()
    if key in _BOOL:
        return pa.bool_()
    return pa.int32()


RECORD_FIELDS = [(RENAMED.get(key, key), _record_type(key)) for key in RECORD_KEYS]
LOG_SCHEMA = pa.schema(COMMON_FIELDS + FRAMING_FIELDS + RECORD_FIELDS)
FRAMES_SCHEMA = pa.schema(COMMON_FIELDS)
_INT64_MAX = (1 << 63) - 1


def spark_type(arrow_type: pa.DataType) -> str:
    """Spark SQL DDL type of an Arrow type used here."""
    if pa.types.is_list(arrow_type):
        return f"array<{spark_type(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        fields = ", ".join(f"{f.name}: {spark_type(f.type)}" for f in arrow_type)
        return f"struct<{fields}>"
    return {
        pa.string(): "string",
        pa.binary(): "binary",
        pa.int64(): "bigint",
        pa.int32(): "int",
        pa.bool_(): "boolean",
    }[arrow_type]


def spark_schema(schema: pa.Schema) -> str:
    return ", ".join(f"{field.name} {spark_type(field.type)}" for field in schema)


# --- log records --------------------------------------------------------------------------------


class _Prefix:
    """Reads the framing prefix (already checked by the length reader) of one setting."""

    def __init__(self, framing: str, byteorder: str):
        self.framing, self.byteorder = framing, byteorder
        self.length = DB2_PREFIX_LENGTHS[framing]
        order = "<" if byteorder == "little" else ">"
        self.filter = struct.Struct(order + "QQQQQQIi")
        self.lsn = struct.Struct(order + "Q")

    def read(self, buffer: bytes, at: int) -> tuple[int, int | None, int]:
        """(LSN, LFS, sqlcode) of the prefix at ``at``."""
        if self.framing == "filter":
            _t1, lfs, lsn, _t2, _p1, _p2, _length, sqlcode = self.filter.unpack_from(buffer, at)
            return lsn, lfs, sqlcode
        return self.lsn.unpack_from(buffer, at)[0], None, 0


# A row as log_batch builds it: these framing values, then the decoded record's values in
# RECORD_KEYS order (decode_record's dicts keep that order); transposed with zip(*rows).
_ROW_FIELDS = ("raw_offset", "record_length", "record_bytes", "decode_error", "frame_lsn",
               "frame_lfs", "frame_sqlcode", *(name for name, _ in RECORD_FIELDS))  # fmt: skip
_CONSTANT_FIELDS = ("source_system", "capture", "source_file", "framing", "byteorder",
                    "prefix_length")  # fmt: skip
_EMPTY_VALUES = (None,) * len(RECORD_KEYS)


def log_batch(
    batch: FrameBatch, capture: str, source_file: str, framing: str, byteorder: str
) -> Iterator[pa.RecordBatch]:
    """One row per framed record of ``batch``, decoded (see the module docstring).

    The common records are decoded column-at-a-time (:mod:`udfs.db2luw.batch_records`), the
    others by :func:`log_batch_per_record`; the rows are the same either way.
    """
    from udfs.db2luw import batch_records  # it builds on this module's row helpers

    return batch_records.log_batch(batch, capture, source_file, framing, byteorder)


def log_batch_per_record(
    batch: FrameBatch, capture: str, source_file: str, framing: str, byteorder: str
) -> Iterator[pa.RecordBatch]:
    """:func:`log_batch` one record at a time with :func:`decode_record` (the reference the
    batch path is tested against, and its fallback)."""
    prefix = _Prefix(framing, byteorder)
    rows: list[tuple] = []
    for start, length in zip(batch.starts.tolist(), batch.lengths.tolist(), strict=True):
        rows.append(_log_row(batch, start, length, prefix))
        if len(rows) >= BATCH_ROWS:
            yield _log_arrow(rows, capture, source_file, framing, byteorder)
            rows = []
    if rows:
        yield _log_arrow(rows, capture, source_file, framing, byteorder)


def _log_row(batch: FrameBatch, start: int, length: int, prefix: _Prefix) -> tuple:
    """The row's values in :data:`_ROW_FIELDS` order."""
    offset = batch.file_offset + start
    framed = batch.buffer[start : start + length]
    lsn, lfs, sqlcode = prefix.read(batch.buffer, start)
    if lsn > _INT64_MAX or (lfs or 0) > _INT64_MAX:
        reason = (
            f"the framing prefix of the record at offset {offset} says LSN {lsn}, LFS {lfs}: "
            "beyond a signed 64-bit value, so the prefix is damaged"
        )
        return (offset, length, framed, reason, None, None, sqlcode, *_EMPTY_VALUES)
    if sqlcode != 0:
        reason = (
            f"db2ReadLog returned sqlcode {sqlcode} for the record at offset {offset}: Db2 could "
            "not decompress it (row compression dictionary gone?); the record is kept as read"
        )
        return (offset, length, framed, reason, lsn, lfs, sqlcode, *_EMPTY_VALUES)
    try:
        decoded = decode_record(framed[prefix.length :], prefix.byteorder)
        _check_int64(decoded)
    except DecodeError as exc:
        reason = str(exc.at(offset=offset))
        return (offset, length, framed, reason, lsn, lfs, sqlcode, *_EMPTY_VALUES)
    values = decoded.values() if len(decoded) == len(RECORD_KEYS) else _in_order(decoded)
    return (offset, length, framed, None, lsn, lfs, sqlcode, *values)


def _in_order(decoded: dict[str, Any]) -> list:
    return [decoded.get(key) for key in RECORD_KEYS]


def _check_int64(decoded: dict[str, Any]) -> None:
    for key in _BIG:
        value = decoded[key]
        if value is not None and value > _INT64_MAX:
            raise DecodeError(f"{key} {value} does not fit a signed 64-bit column")


def _log_arrow(
    rows: list[tuple], capture: str, source_file: str, framing: str, byteorder: str
) -> pa.RecordBatch:
    count = len(rows)
    constants = dict(zip(_CONSTANT_FIELDS, (SOURCE_SYSTEM, capture, source_file, framing,
                                            byteorder, DB2_PREFIX_LENGTHS[framing])))  # fmt: skip
    columns = dict(zip(_ROW_FIELDS, zip(*rows, strict=True), strict=True))
    arrays = [
        pa.array([constants[field.name]] * count, field.type)
        if field.name in constants
        else pa.array(columns[field.name], field.type)
        for field in LOG_SCHEMA
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=LOG_SCHEMA)


def failure_batch(
    failure: FramingFailure, capture: str, source_file: str, framing: str, byteorder: str
) -> pa.RecordBatch:
    """The unframeable rest of a file as one quarantined row, with the reason."""
    row = (failure.offset, failure.length, failure.data, failure.reason, None, None, None,
           *_EMPTY_VALUES)  # fmt: skip
    return _log_arrow([row], capture, source_file, framing, byteorder)


def frames_batch(batch: FrameBatch, capture: str, source_file: str) -> pa.RecordBatch:
    """The records of a batch, framed but not decoded (the benchmark's baseline input)."""
    rows = len(batch)
    starts, lengths = batch.starts.tolist(), batch.lengths.tolist()
    arrays = [
        pa.array([SOURCE_SYSTEM] * rows, pa.string()),
        pa.array([capture] * rows, pa.string()),
        pa.array([source_file] * rows, pa.string()),
        pa.array([batch.file_offset + s for s in starts], pa.int64()),
        pa.array(lengths, pa.int64()),
        pa.array(
            [batch.buffer[s : s + n] for s, n in zip(starts, lengths, strict=True)], pa.binary()
        ),
        pa.nulls(rows, pa.string()),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=FRAMES_SCHEMA)


# --- catalog export -----------------------------------------------------------------------------

CATALOG_TABLE_FIELDS = [
    ("tabschema", pa.string()), ("tabname", pa.string()), ("tbspaceid", pa.int32()),
    ("tableid", pa.int32()), ("type", pa.string()), ("compression", pa.string()),
    ("datacapture", pa.string()), ("colcount", pa.int32()),
]  # fmt: skip
CATALOG_COLUMN_FIELDS = [
    ("tabschema", pa.string()), ("tabname", pa.string()), ("colname", pa.string()),
    ("colno", pa.int32()), ("typename", pa.string()), ("length", pa.int32()),
    ("scale", pa.int32()), ("nulls", pa.string()), ("compress", pa.string()),
    ("inline_length", pa.int32()), ("codepage", pa.int32()), ("keyseq", pa.int32()),
    ("typeschema", pa.string()),  # optional: the distinct type's schema (interpretation 21)
]  # fmt: skip
CATALOG_DATAPARTITION_FIELDS = [
    ("tabschema", pa.string()), ("tabname", pa.string()), ("datapartitionname", pa.string()),
    ("datapartitionid", pa.int32()), ("tbspaceid", pa.int32()),
    ("partitionobjectid", pa.int32()),
]  # fmt: skip
CATALOG_DATATYPE_FIELDS = [
    ("typeschema", pa.string()), ("typename", pa.string()), ("sourceschema", pa.string()),
    ("sourcename", pa.string()), ("metatype", pa.string()), ("length", pa.int32()),
    ("scale", pa.int32()),
]  # fmt: skip
CATALOG_FILES = {
    "tables.csv": (CATALOG_TABLE_FIELDS, ("TABSCHEMA", "TABNAME", "TBSPACEID", "TABLEID")),
    "columns.csv": (
        CATALOG_COLUMN_FIELDS,
        ("TABSCHEMA", "TABNAME", "COLNAME", "COLNO", "TYPENAME", "LENGTH", "SCALE", "NULLS"),
    ),
    # optional (docs/db2luw.md interpretation 21)
    "datapartitions.csv": (
        CATALOG_DATAPARTITION_FIELDS,
        ("TABSCHEMA", "TABNAME", "TBSPACEID", "PARTITIONOBJECTID"),
    ),
    "datatypes.csv": (
        CATALOG_DATATYPE_FIELDS,
        ("TYPESCHEMA", "TYPENAME", "SOURCENAME", "LENGTH", "SCALE"),
    ),
}
CATALOG_SCHEMAS = {
    name: pa.schema([*COMMON_FIELDS, ("line_number", pa.int32()), *fields])
    for name, (fields, _) in CATALOG_FILES.items()
}


def catalog_batch(path: Path, capture: str, source_file: str) -> pa.RecordBatch:
    """Every data row of a catalog export file (``tables.csv`` or ``columns.csv``)."""
    fields, required = CATALOG_FILES[path.name]
    schema = CATALOG_SCHEMAS[path.name]
    rows = []
    header: list[str] | None = None
    for line_number, offset, raw, cells in _csv_rows(path.read_bytes()):
        if header is None:
            header = [cell.strip().upper() for cell in cells]
            missing = [name for name in required if name not in header]
            continue
        row = {"raw_offset": offset, "record_length": len(raw), "record_bytes": raw,
               "line_number": line_number}  # fmt: skip
        if missing:
            row["decode_error"] = (
                f"{source_file} has no {', '.join(missing)} column in its header row "
                f"({', '.join(header)}); export it as docs/db2luw.md shows"
            )
        else:
            _catalog_values(row, dict(zip(header, cells, strict=False)), cells, header, fields)
        rows.append(row)
    count = len(rows)
    constants = {"source_system": SOURCE_SYSTEM, "capture": capture, "source_file": source_file}
    arrays = [
        pa.array([constants[f.name]] * count, f.type)
        if f.name in constants
        else pa.array([row.get(f.name) for row in rows], f.type)
        for f in schema
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _catalog_values(row: dict, cells_by_name: dict, cells: list, header: list, fields) -> None:
    if len(cells) != len(header):
        row["decode_error"] = (
            f"line {row['line_number']} has {len(cells)} fields, the header row {len(header)}"
        )
        return
    for name, kind in fields:
        text = cells_by_name.get(name.upper())
        if text is None:
            continue
        text = text.rstrip() if name == "colname" else text.strip()
        if kind == pa.string():
            row[name] = text
        elif text:
            try:
                row[name] = int(text)
            except ValueError:
                row["decode_error"] = (
                    f"line {row['line_number']}: {name.upper()} {text!r} is not a whole number"
                )
                return


def _csv_rows(data: bytes) -> Iterator[tuple[int, int, bytes, list[str]]]:
    """(line number, byte offset, bytes, cells) of each CSV row; quoted newlines allowed."""
    starts: list[int] = []
    lines = data.splitlines(keepends=True)

    def text_lines() -> Iterator[str]:
        at = 0
        for line in lines:
            starts.append(at)
            at += len(line)
            yield line.decode("utf-8-sig" if at == len(line) else "utf-8", errors="replace")

    reader = csv.reader(text_lines())
    consumed = 0
    for cells in reader:
        first, consumed = consumed, len(starts)
        if not any(cell.strip() for cell in cells):
            continue
        begin = starts[first]
        end = starts[consumed - 1] + len(lines[consumed - 1])
        yield first + 1, begin, data[begin:end], cells
