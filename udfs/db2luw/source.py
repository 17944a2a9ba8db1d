"""Spark Python data source ``logmart_db2luw``: Db2 LUW captures -> framed, decoded rows.

``spark.read.format("logmart_db2luw").option("path", RAW/db2luw)`` with option ``records``:

* ``log`` (default): one row per log record of every ``<capture>/*.log`` file
  (:data:`udfs.db2luw.readers.LOG_SCHEMA`), read with the options ``framing`` (``filter`` |
  ``lsn``, default ``filter``) and ``byteorder`` (``little`` | ``big``, default ``little``).
  Bytes that do not frame with them are not decoded but quarantined as one row whose reason
  names the settings they do fit; reading resumes where records frame again
  (:func:`udfs.framing.db2_resync`), so a damaged record loses only itself and a file the
  settings do not fit at all is one row.
* ``catalog_tables`` / ``catalog_columns``: the rows of ``<capture>/catalog/tables.csv`` /
  ``columns.csv`` (SYSCAT export with a header row).
* ``frames``: log records framed but not decoded (the benchmark's baseline input).

With ``records`` = ``log``, option ``images`` = ``true`` also decodes each record's before and
after image with its table's layout in the capture's catalog export, column-at-a-time
(:func:`udfs.db2luw.batch_rows.inline_images`: columns ``image_digest``, ``before_row``,
``after_row``; options ``codec`` / ``graphic_codec`` as the dbt vars, default UTF-8 /
UTF-16BE). ``int_db2luw_row_images_decoded`` takes them where the digest is its own layout
version's and decodes the rest with ``logmart_db2luw_row``.

The driver only lists files (and, for files larger than ``split_bytes``, walks their framing
to cut record-aligned ranges); executors frame and decode, streaming in chunks, so a file is
never held whole in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from udfs.db2luw import batch_rows, readers
from udfs.db2luw.rows import read_catalog
from udfs.errors import DecodeError
from udfs.framing import (
    FramingFailure,
    db2_read_log_length,
    db2_resync,
    frame_file,
    split_points,
)

DEFAULT_SPLIT_BYTES = 256 << 20
RECORDS = {
    "log": readers.LOG_SCHEMA,
    "frames": readers.FRAMES_SCHEMA,
    "catalog_tables": readers.CATALOG_SCHEMAS["tables.csv"],
    "catalog_columns": readers.CATALOG_SCHEMAS["columns.csv"],
    "catalog_datapartitions": readers.CATALOG_SCHEMAS["datapartitions.csv"],
    "catalog_datatypes": readers.CATALOG_SCHEMAS["datatypes.csv"],
}
CATALOG_FOLDER = "catalog"


# --- discovery (driver) ----------------------------------------------------------------------


@dataclass(frozen=True)
class CaptureFile:
    """A file under RAW/db2luw: its capture (folder) and what it is by its place and name."""

    path: Path
    relative: str  # to the raw root, '/' separators
    capture: str
    size: int
    kind: str  # 'log' | 'empty' | 'catalog' | 'ignored'


def discover(root: Path, raw_root: Path) -> list[CaptureFile]:
    """Every file under ``root`` (RAW/db2luw): ``<capture>/*.log`` are log files (``empty``
    when 0 bytes), ``<capture>/catalog/{tables,columns}.csv`` the catalog export, anything
    else is listed as ``ignored`` (so the reconciliation shows it)."""
    if not root.is_dir():
        return []
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")):
        size = path.stat().st_size
        in_catalog = path.parent.name == CATALOG_FOLDER and path.name in readers.CATALOG_FILES
        folder = path.parent.parent if in_catalog else path.parent
        capture = folder.relative_to(root).as_posix()
        if in_catalog:
            kind = "catalog"
        elif path.suffix.lower() == ".log":
            kind = "log" if size else "empty"
        else:
            kind = "ignored"
        found.append(
            CaptureFile(
                path=path,
                relative=path.relative_to(raw_root).as_posix(),
                capture="" if capture == "." else capture,
                size=size,
                kind=kind,
            )
        )
    return found


# --- the data source ----------------------------------------------------------------------------


class FilePartition(InputPartition):
    """A record-aligned byte range of one file."""

    def __init__(
        self, capture_file: CaptureFile, start: int, end: int, decodings: dict | None = None
    ):
        super().__init__(capture_file.relative)
        self.capture_file = capture_file
        self.start = start
        self.end = end
        self.decodings = decodings  # catalog layouts for option images=true


class Db2LuwDataSource(DataSource):
    """``spark.read.format("logmart_db2luw")``; options ``path``, ``raw_root``, ``records``,
    ``framing``, ``byteorder``, ``split_bytes``."""

    @classmethod
    def name(cls) -> str:
        return "logmart_db2luw"

    def schema(self) -> str:
        schema = RECORDS[_records(self.options)]
        if _images(self.options):
            schema = _with_image_fields(schema)
        return readers.spark_schema(schema)

    def reader(self, schema) -> DataSourceReader:
        return Db2LuwReader(dict(self.options))


def _records(options) -> str:
    records = options.get("records", "log")
    if records not in RECORDS:
        raise ValueError(f"option records must be one of {sorted(RECORDS)}, not {records!r}")
    return records


def _images(options) -> bool:
    value = str(options.get("images") or "false").lower()
    if value not in ("true", "false"):
        raise ValueError(f"option images must be 'true' or 'false', not {value!r}")
    if value == "true" and _records(options) != "log":
        raise ValueError("option images=true needs records=log")
    return value == "true"


def _with_image_fields(schema: pa.Schema) -> pa.Schema:
    return pa.schema([*schema, *batch_rows.INLINE_FIELDS])


def _capture_decodings(
    files: list[CaptureFile], settings: dict[str, str], byteorder: str
) -> dict[str, dict]:
    """Per capture with log files: its catalog export's layouts and their digests (none when
    the export is missing or unreadable: then the UDF decodes every image, as before)."""
    found: dict[str, dict] = {}
    for log_file in files:
        if log_file.kind != "log" or log_file.capture in found:
            continue
        catalog = log_file.path.parent / CATALOG_FOLDER
        try:
            layouts = read_catalog(catalog) if (catalog / "tables.csv").is_file() else {}
        except DecodeError:
            layouts = {}  # the catalog models quarantine what is wrong with it
        found[log_file.capture] = batch_rows.catalog_decodings(layouts, settings, byteorder)
    return found


class Db2LuwReader(DataSourceReader):
    def __init__(self, options: dict):
        self.root = Path(options["path"])
        self.raw_root = Path(options.get("raw_root") or self.root.parent)
        self.records = _records(options)
        self.framing = options.get("framing") or "filter"
        self.byteorder = options.get("byteorder") or "little"
        self.split_bytes = int(options.get("split_bytes") or DEFAULT_SPLIT_BYTES)
        self.images = _images(options)
        self.settings = {
            "codec": options.get("codec") or batch_rows.DEFAULT_SETTINGS["codec"],
            "graphic_codec": options.get("graphic_codec")
            or batch_rows.DEFAULT_SETTINGS["graphic_codec"],
        }
        db2_read_log_length(self.framing, self.byteorder)  # a bad setting fails here, on the driver

    def partitions(self) -> list[FilePartition]:
        files = discover(self.root, self.raw_root)
        parts = []
        if self.records.startswith("catalog_"):
            name = self.records.removeprefix("catalog_") + ".csv"
            parts = [FilePartition(f, 0, f.size) for f in files
                     if f.kind == "catalog" and f.path.name == name]  # fmt: skip
        else:
            length = db2_read_log_length(self.framing, self.byteorder)
            resync = db2_resync(self.framing, self.byteorder)
            decodings = (
                _capture_decodings(files, self.settings, self.byteorder) if self.images else {}
            )
            for log_file in (f for f in files if f.kind == "log"):
                tables = decodings.get(log_file.capture) if self.images else None
                for start, end in split_points(log_file.path, length, self.split_bytes, resync):
                    parts.append(FilePartition(log_file, start, end, tables))
        # Spark needs at least one partition; an empty one reads nothing.
        return parts or [FilePartition(CaptureFile(self.root, "", "", 0, "empty"), 0, 0)]

    def read(self, partition: FilePartition) -> Iterator[pa.RecordBatch]:
        capture_file = partition.capture_file
        if capture_file.kind == "catalog":
            yield readers.catalog_batch(
                capture_file.path, capture_file.capture, capture_file.relative
            )
        elif capture_file.kind == "log":
            yield from self._read_log(partition)

    def _read_log(self, partition: FilePartition) -> Iterator[pa.RecordBatch]:
        for batch in self._read_log_records(partition):
            if self.images:
                batch = batch_rows.inline_images(
                    batch, partition.decodings or {}, self.settings, self.byteorder
                )
            yield batch

    def _read_log_records(self, partition: FilePartition) -> Iterator[pa.RecordBatch]:
        f = partition.capture_file
        length = db2_read_log_length(self.framing, self.byteorder)
        resync = db2_resync(self.framing, self.byteorder)
        for batch in frame_file(f.path, length, partition.start, partition.end, resync=resync):
            if isinstance(batch, FramingFailure):
                failure = readers.failure_batch(
                    batch, f.capture, f.relative, self.framing, self.byteorder
                )
                if self.records == "frames":
                    failure = failure.select(range(len(readers.COMMON_FIELDS)))
                yield failure
            elif self.records == "frames":
                yield readers.frames_batch(batch, f.capture, f.relative)
            else:
                yield from readers.log_batch(
                    batch, f.capture, f.relative, self.framing, self.byteorder
                )
