"""Spark Python data source ``logmart_logmaster``: Log Master extracts -> framed, decoded rows.

``spark.read.format("logmart_logmaster").option("path", RAW/logmaster)`` with
``option("records", "control")`` gives one row per control record (a struct column per known
record type) and with ``"data"`` one row per LLDF record (header fields as columns). The driver
only lists files, sniffs their first bytes and reads each extract's small control file for
the header layout; data files are framed and decoded on the executors, streaming, split into
record-aligned ranges when large.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from udfs.batch import ARROW_TYPES, SPARK_TYPES, field_specs
from udfs.fields import _Field
from udfs.framing import FramingFailure, frame_file, split_points
from udfs.logmaster import batch_records, batch_rows, control
from udfs.logmaster.control import ControlSummary
from udfs.logmaster.layouts import CONTROL_LAYOUTS

DEFAULT_SPLIT_BYTES = 256 << 20
# What a data file is read with when its extract has no control file: the documented layout.
_NO_CONTROL = control.summarize_control_file(None)


# --- discovery (driver) ----------------------------------------------------------------------


@dataclass(frozen=True)
class LogFile:
    """A file of an extract: where it is and what its first bytes say it is."""

    path: Path
    relative: str  # to the raw root, '/' separators
    capture: str
    size: int
    control_codec: str | None  # set for control files

    @property
    def kind(self) -> str:
        if self.size == 0:
            return "empty"
        return "control" if self.control_codec else "data"


def discover(root: Path, raw_root: Path) -> list[LogFile]:
    """Files under ``root`` (RAW/logmaster), each with its extract (its folder) and kind."""
    if not root.is_dir():
        return []
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")):
        capture = path.parent.relative_to(root).as_posix()
        found.append(
            LogFile(
                path=path,
                relative=path.relative_to(raw_root).as_posix(),
                capture="" if capture == "." else capture,
                size=path.stat().st_size,
                control_codec=control.sniff(path),
            )
        )
    return found


def control_summaries(files: list[LogFile]) -> dict[str, ControlSummary]:
    """Per extract, what its (first) control file says about the data files."""
    summaries: dict[str, ControlSummary] = {}
    for log_file in files:
        if log_file.kind == "control" and log_file.capture not in summaries:
            summaries[log_file.capture] = control.summarize_control_file(log_file.path)
    return summaries


# --- schemas -----------------------------------------------------------------------------------


def _kinds(layout) -> list[tuple[str, str]]:
    """(column, kind) of a control layout's fields; Optional(...) fields take their inner kind."""
    kinds = []
    for sub in layout.subcons:
        field = sub.subcon
        if not isinstance(field, _Field):
            field = field.subcons[0]  # Optional(x) is Select(x, Pass)
        if field.kind != "reserved":
            kinds.append((sub.name.lower(), field.kind))
    return kinds


def _struct_type(layout) -> str:
    return f"struct<{', '.join(f'{n}: {SPARK_TYPES[k]}' for n, k in _kinds(layout))}>"


def _arrow_struct(layout) -> pa.DataType:
    return pa.struct([pa.field(n, ARROW_TYPES[k]) for n, k in _kinds(layout)])


COMMON_COLUMNS = (
    "source_system string, capture string, source_file string, raw_offset bigint, "
    "record_length bigint, record_bytes binary, decode_error string"
)
CONTROL_SCHEMA = ", ".join(
    [COMMON_COLUMNS, "record_type string"]
    + [f"{name.lower()} {_struct_type(layout)}" for name, layout in CONTROL_LAYOUTS.items()]
)
CONTROL_ARROW_SCHEMA = pa.schema(
    batch_records.COMMON_FIELDS
    + [("record_type", pa.string())]
    + [(name.lower(), _arrow_struct(layout)) for name, layout in CONTROL_LAYOUTS.items()]
)
FRAMES_SCHEMA = COMMON_COLUMNS
DATA_SCHEMA = ", ".join(
    [COMMON_COLUMNS]
    + [f"{spec.column} {SPARK_TYPES[spec.kind]}" for spec in control.DOCUMENTED_HEADER]
    + ["data_offset int, data_length int"]
)
# With option images=true: the row images of one-segment records (udfs/logmaster/batch_rows.py).
IMAGES_SCHEMA = ", ".join(
    [DATA_SCHEMA, "image_digest string, before_values array<string>, "
     "after_values array<string>, image_warnings array<string>, image_error string"]
)  # fmt: skip
assert len(field_specs(control.LLDF_HEADER)) == len(control.DOCUMENTED_HEADER)


# --- the data source ----------------------------------------------------------------------------


class FilePartition(InputPartition):
    """A byte range of one file and what decoding it needs."""

    def __init__(
        self,
        log_file: LogFile,
        start: int,
        end: int,
        summary: ControlSummary | None,
        versions: dict | None = None,
    ):
        super().__init__(log_file.relative)
        self.log_file = log_file
        self.start = start
        self.end = end
        self.summary = summary
        self.versions = versions  # table versions for row images (option images=true)


class LogMasterDataSource(DataSource):
    """``spark.read.format("logmart_logmaster")``; options ``path``, ``raw_root``, ``records``
    and, with ``records`` = data, ``images`` = true to decode one-segment records' row images."""

    @classmethod
    def name(cls) -> str:
        return "logmart_logmaster"

    def schema(self) -> str:
        if self._records() == "data" and _images(self.options):
            return IMAGES_SCHEMA
        return {"control": CONTROL_SCHEMA, "data": DATA_SCHEMA, "frames": FRAMES_SCHEMA}[
            self._records()
        ]

    def reader(self, schema) -> DataSourceReader:
        return LogMasterReader(dict(self.options), self._records())

    def _records(self) -> str:
        records = self.options.get("records", "data")
        if records not in ("control", "data", "frames"):
            raise ValueError(
                f"option records must be 'control', 'data' or 'frames', not {records!r}"
            )
        return records


class LogMasterReader(DataSourceReader):
    def __init__(self, options: dict, records: str):
        self.root = Path(options["path"])
        self.raw_root = Path(options.get("raw_root") or self.root.parent)
        self.records = records
        self.split_bytes = int(options.get("split_bytes") or DEFAULT_SPLIT_BYTES)
        self.images = records == "data" and _images(options)

    def partitions(self) -> list[FilePartition]:
        files = discover(self.root, self.raw_root)
        parts = []
        if self.records == "control":
            parts = [FilePartition(f, 0, f.size, None) for f in files if f.kind == "control"]
            files = []
        summaries = control_summaries(files)
        versions = _table_versions(files) if self.images else {}
        for log_file in files:
            if log_file.kind != "data":
                continue
            summary = summaries.get(log_file.capture)
            tables = versions.get(log_file.capture, {}) if self.images else None
            rdw, resync = batch_records.data_framing((summary or _NO_CONTROL).header)
            for start, end in split_points(log_file.path, rdw, self.split_bytes, resync):
                parts.append(FilePartition(log_file, start, end, summary, tables))
        # Spark needs at least one partition; an empty one reads nothing.
        return parts or [FilePartition(LogFile(self.root, "", "", 0, None), 0, 0, None)]

    def read(self, partition: FilePartition) -> Iterator[pa.RecordBatch]:
        if partition.log_file.size == 0:
            return
        if self.records == "control":
            yield from _read_control(partition.log_file)
        else:
            yield from _read_data(partition, decode=self.records == "data")


def _images(options) -> bool:
    value = str(options.get("images") or "false").lower()
    if value not in ("true", "false"):
        raise ValueError(f"option images must be 'true' or 'false', not {value!r}")
    return value == "true"


def _table_versions(files: list[LogFile]) -> dict[str, dict]:
    """Per extract, the table versions of its (first) control file, for row images."""
    found: dict[str, dict] = {}
    for log_file in files:
        if log_file.kind == "control" and log_file.capture not in found:
            found[log_file.capture] = batch_rows.table_versions(log_file.path)
    return found


def _read_data(partition: FilePartition, decode: bool = True) -> Iterator[pa.RecordBatch]:
    """Data file records; ``decode=False`` frames only (the benchmark's baseline input)."""
    log_file = partition.log_file
    summary = partition.summary or _NO_CONTROL
    versions = partition.versions
    rdw, resync = batch_records.data_framing(summary.header)
    for batch in frame_file(log_file.path, rdw, partition.start, partition.end, resync=resync):
        if isinstance(batch, FramingFailure):
            failure = batch_records.failure_batch(batch, log_file.capture, log_file.relative)
            if not decode:
                failure = failure.select(range(len(batch_records.COMMON_FIELDS)))
            yield failure if versions is None else _with_images(failure, {})
        elif decode:
            decoded = batch_records.decode_data_batch(
                batch, summary.header, summary.codec, log_file.capture, log_file.relative
            )
            yield decoded if versions is None else _with_images(decoded, versions)
        else:
            yield batch_records.frames_batch(batch, log_file.capture, log_file.relative)


def _with_images(batch: pa.RecordBatch, versions: dict) -> pa.RecordBatch:
    columns = batch_rows.decode_images(batch, versions)
    arrays = batch.columns + columns
    names = batch.schema.names + [name for name, _ in batch_rows.IMAGE_FIELDS]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _read_control(log_file: LogFile) -> Iterator[pa.RecordBatch]:
    rows = []
    for record in control.read_control_file(log_file.path, log_file.control_codec or "cp037"):
        row = {
            "source_system": batch_records.SOURCE_SYSTEM,
            "capture": log_file.capture,
            "source_file": log_file.relative,
            "raw_offset": record.offset,
            "record_length": record.length,
            "record_bytes": record.data,
            "decode_error": record.error,
            "record_type": record.record_type,
        }
        if record.fields is not None and record.record_type in CONTROL_LAYOUTS:
            row[record.record_type.lower()] = record.fields
        rows.append(row)
        if len(rows) >= 4096:
            yield pa.RecordBatch.from_pylist(rows, schema=CONTROL_ARROW_SCHEMA)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=CONTROL_ARROW_SCHEMA)
