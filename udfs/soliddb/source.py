"""Spark Python data source ``logmart_soliddb``: solidDB SYS_LOG exports -> typed rows.

``spark.read.format("logmart_soliddb").option("path", RAW/soliddb)`` reads every capture folder
under ``RAW/soliddb`` (``<capture>/sys_log.*``: Parquet, CSV or JSON lines, several files per
capture allowed) and gives one row per SYS_LOG row read, with the raw contract columns
(``docs/architecture.md``) and SYS_LOG's columns typed. ``option("records", …)``:

* ``sys_log`` (default): the SYS_LOG rows -> ``raw.soliddb_sys_log``;
* ``catalog_tables`` / ``catalog_columns``: the rows of ``<capture>/catalog/SYS_TABLES.csv`` /
  ``SYS_COLUMNS.csv`` -> ``raw.soliddb_catalog_tables`` / ``raw.soliddb_catalog_columns``
  (the columns logmart uses, as text; other columns are ignored).

Where a row is, for every kind: ``raw_offset`` is the row's **number** in its file, counting data
rows from 0 (a CSV header and blank lines are not rows): Parquet has no byte offset per row, and a
row number is what a person finds again in any of the three formats. ``record_bytes`` is the
row's line(s) for CSV / JSON lines, and for Parquet the row serialised as a JSON-lines export
line (:mod:`udfs.soliddb.readers`); ``record_length`` is its length in bytes.

The driver only lists files (and reads Parquet footers to split large files by row groups);
files are read on the executors, streaming. A bad row (hex that is not hex, a LOGADDR that is
not 20 bytes, a number that is not one) is a row with ``decode_error``; a file that cannot be
read at all is one row at ``raw_offset`` 0 holding its first bytes and the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from udfs.errors import DecodeError
from udfs.raw_contract import COMMON_FIELDS
from udfs.soliddb.layouts import SYS_LOG_COLUMNS
from udfs.soliddb.readers import (
    FORMATS,
    csv_cells,
    csv_records,
    hex_upper_array,
    read_export_batches,
)

SOURCE_SYSTEM = "soliddb"
DEFAULT_SPLIT_ROWS = 250_000
BATCH_ROWS = 32_768
FAILURE_BYTES = 1 << 16  # bytes of an unreadable file kept as its record_bytes
CATALOG_FOLDER = "catalog"

# Catalog exports: file name -> (records kind, columns logmart keeps, columns a row must have).
# A kept column may be spelled by any of its names (first found wins).
CATALOG_FILES: dict[str, tuple[str, dict[str, tuple[str, ...]], tuple[str, ...]]] = {
    "SYS_TABLES.CSV": (
        "catalog_tables",
        {"id": ("ID",), "table_name": ("TABLE_NAME",), "schema": ("SCHEMA", "TABLE_SCHEMA")},
        ("ID", "TABLE_NAME"),
    ),
    "SYS_COLUMNS.CSV": (
        "catalog_columns",
        {
            "rel_id": ("REL_ID",),
            "column_name": ("COLUMN_NAME",),
            "column_number": ("COLUMN_NUMBER",),
            "data_type": ("DATA_TYPE",),
            "data_type_number": ("DATA_TYPE_NUMBER",),
            "char_max_length": ("CHAR_MAX_LENGTH",),
            "numeric_precision": ("NUMERIC_PRECISION",),
            "numeric_scale": ("NUMERIC_SCALE",),
            "nullable": ("NULLABLE",),
        },
        ("REL_ID", "COLUMN_NAME", "COLUMN_NUMBER"),
    ),
}
# Catalog columns that must hold whole numbers when present.
CATALOG_INTEGERS = frozenset(
    ("ID", "REL_ID", "COLUMN_NUMBER", "CHAR_MAX_LENGTH", "NUMERIC_PRECISION", "NUMERIC_SCALE")
)

SYS_LOG_FIELDS = [(c.name.lower(), c.arrow_type) for c in SYS_LOG_COLUMNS]
SYS_LOG_FIELDS.insert(
    [n for n, _ in SYS_LOG_FIELDS].index("logaddr") + 1, ("logaddr_hex", pa.string())
)
ARROW_SCHEMAS: dict[str, pa.Schema] = {
    "sys_log": pa.schema(COMMON_FIELDS + SYS_LOG_FIELDS),
    **{
        kind: pa.schema(COMMON_FIELDS + [(name, pa.string()) for name in kept])
        for kind, kept, _ in CATALOG_FILES.values()
    },
}
_SPARK_NAMES = {
    pa.string(): "string",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.binary(): "binary",
}


def spark_schema(records: str) -> str:
    """The DDL schema string of a ``records`` kind."""
    return ", ".join(f"{f.name} {_SPARK_NAMES[f.type]}" for f in ARROW_SCHEMAS[records])


# --- discovery (driver) ----------------------------------------------------------------------


@dataclass(frozen=True)
class ExportFile:
    """A file under RAW/soliddb: where it is, its capture and what logmart reads it as."""

    path: Path
    relative: str  # to the raw root, '/' separators
    capture: str
    size: int
    kind: str  # parquet | csv | jsonl | catalog_tables | catalog_columns | empty | other


def file_kind(path: Path, root: Path) -> tuple[str, str]:
    """(kind, capture) of a file under ``root``, from its place and name (never its bytes).

    ``<capture>/sys_log*.{parquet,csv,jsonl,ndjson,json}`` is an export;
    ``<capture>/catalog/SYS_TABLES.csv`` / ``SYS_COLUMNS.csv`` (any case) a catalog export;
    anything else is ``other`` and not read.
    """
    parent = path.parent.relative_to(root).as_posix()
    name = path.name.upper()
    if path.parent.name.lower() == CATALOG_FOLDER and name in CATALOG_FILES:
        capture = path.parent.parent.relative_to(root).as_posix()
        return CATALOG_FILES[name][0], "" if capture == "." else capture
    capture = "" if parent == "." else parent
    if path.name.lower().startswith("sys_log") and path.suffix.lower() in FORMATS:
        return FORMATS[path.suffix.lower()], capture
    return "other", capture


def discover(root: Path, raw_root: Path) -> list[ExportFile]:
    """Files under ``root`` (RAW/soliddb), sorted by path, each with its capture and kind."""
    if not root.is_dir():
        return []
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")):
        kind, capture = file_kind(path, root)
        size = path.stat().st_size
        found.append(
            ExportFile(
                path=path,
                relative=path.relative_to(raw_root).as_posix(),
                capture=capture,
                size=size,
                kind="empty" if size == 0 and kind != "other" else kind,
            )
        )
    return found


# --- the data source ----------------------------------------------------------------------------


class ExportPartition(InputPartition):
    """One file, or for Parquet a run of its row groups (None: the whole file)."""

    def __init__(self, export: ExportFile, row_groups: list[int] | None = None):
        super().__init__(export.relative)
        self.export = export
        self.row_groups = row_groups


class SolidDbDataSource(DataSource):
    """``spark.read.format("logmart_soliddb")``; options ``path``, ``raw_root``, ``records``,
    ``split_rows`` (Parquet rows per partition, whole row groups)."""

    @classmethod
    def name(cls) -> str:
        return "logmart_soliddb"

    def schema(self) -> str:
        return spark_schema(self._records())

    def reader(self, schema) -> DataSourceReader:
        return SolidDbReader(dict(self.options), self._records())

    def _records(self) -> str:
        records = self.options.get("records", "sys_log")
        if records not in ARROW_SCHEMAS:
            raise ValueError(
                f"option records must be one of {', '.join(ARROW_SCHEMAS)}, not {records!r}"
            )
        return records


class SolidDbReader(DataSourceReader):
    def __init__(self, options: dict, records: str):
        self.root = Path(options["path"])
        self.raw_root = Path(options.get("raw_root") or self.root.parent)
        self.records = records
        self.split_rows = int(options.get("split_rows") or DEFAULT_SPLIT_ROWS)

    def partitions(self) -> list[ExportPartition]:
        parts = []
        for export in discover(self.root, self.raw_root):
            if self.records == "sys_log" and export.kind == "parquet":
                parts.extend(
                    ExportPartition(export, groups)
                    for groups in parquet_splits(export.path, self.split_rows)
                )
            elif (self.records == "sys_log" and export.kind in ("csv", "jsonl")) or (
                export.kind == self.records
            ):
                parts.append(ExportPartition(export))
        # Spark needs at least one partition; an empty one reads nothing.
        return parts or [ExportPartition(ExportFile(self.root, "", "", 0, "empty"))]

    def read(self, partition: ExportPartition) -> Iterator[pa.RecordBatch]:
        export = partition.export
        if export.kind == "empty":
            return
        if self.records == "sys_log":
            yield from read_sys_log_file(export, partition.row_groups)
        else:
            yield from read_catalog_file(export, self.records)


def parquet_splits(path: Path, split_rows: int) -> list[list[int] | None]:
    """Runs of consecutive row groups of about ``split_rows`` rows; [None] = the whole file
    (also when the footer cannot be read: the executor then reports the failure)."""
    try:
        metadata = pq.ParquetFile(path).metadata
    except (OSError, pa.ArrowException, ValueError):  # ValueError: a name that is not UTF-8
        return [None]
    runs: list[list[int] | None] = []
    run: list[int] = []
    rows = 0
    for index in range(metadata.num_row_groups):
        run.append(index)
        rows += metadata.row_group(index).num_rows
        if rows >= split_rows:
            runs.append(run)
            run, rows = [], 0
    if run:
        runs.append(run)
    return runs or [None]


# --- reading (executors) -------------------------------------------------------------------------


def read_sys_log_file(
    export: ExportFile, row_groups: list[int] | None = None
) -> Iterator[pa.RecordBatch]:
    """An export's rows as batches of the ``sys_log`` schema; a file that cannot be read (from
    where it broke off) becomes one failure row."""
    next_row = 0
    try:
        for batch in read_export_batches(export.path, BATCH_ROWS, row_groups):
            yield _sys_log_batch(batch.rows, batch.record_bytes, export)
            next_row = batch.rows.column("row_number")[-1].as_py() + 1
    except (OSError, DecodeError, pa.ArrowException, ValueError) as exc:
        yield failure_batch(export, "sys_log", next_row, _file_failure(export, exc, next_row))


def _sys_log_batch(rows: pa.RecordBatch, raw: pa.Array, export: ExportFile) -> pa.RecordBatch:
    columns: dict[str, pa.Array] = {
        "source_system": _constant(SOURCE_SYSTEM, rows.num_rows),
        "capture": _constant(export.capture, rows.num_rows),
        "source_file": _constant(export.relative, rows.num_rows),
        "raw_offset": rows.column("row_number"),
        "record_length": pc.binary_length(raw).cast(pa.int64()),
        "record_bytes": raw,
        "decode_error": rows.column("decode_error"),
    }
    for name, _ in SYS_LOG_FIELDS:
        if name == "logaddr_hex":
            columns[name] = hex_upper_array(rows.column("logaddr"))
        else:
            columns[name] = rows.column(name)
    return pa.RecordBatch.from_pydict(columns, schema=ARROW_SCHEMAS["sys_log"])


def _constant(value: str, rows: int) -> pa.Array:
    return pa.array([value] * rows, pa.string())


def _file_failure(export: ExportFile, exc: Exception, row: int) -> str:
    where = "the file" if row == 0 else f"the file from row {row} on"
    return (
        f"{where} could not be read as a {export.kind} SYS_LOG export ({exc}); check that the "
        "file is complete and its name's suffix says its format (.parquet, .csv, .jsonl)"
    )


def failure_batch(export: ExportFile, records: str, row: int, reason: str) -> pa.RecordBatch:
    """One quarantined row standing for the unreadable rest of a file: its first bytes."""
    with export.path.open("rb") as handle:
        head = handle.read(FAILURE_BYTES)
    values = {name: None for name in ARROW_SCHEMAS[records].names}
    values.update(
        source_system=SOURCE_SYSTEM,
        capture=export.capture,
        source_file=export.relative,
        raw_offset=row,
        record_length=len(head),
        record_bytes=head,
        decode_error=reason,
    )
    return pa.RecordBatch.from_pylist([values], schema=ARROW_SCHEMAS[records])


def read_catalog_file(export: ExportFile, records: str) -> Iterator[pa.RecordBatch]:
    """A catalog export's rows: the kept columns as text, a reason on rows that lack a required
    value or hold a number that is not one (and on every row when the header lacks a column)."""
    _, kept, required = CATALOG_FILES[export.path.name.upper()]
    rows: list[dict] = []
    next_row = 0
    try:
        lines = csv_records(export.path)
        header = [name.strip().upper() for name in csv_cells(next(lines, b""))]
        lacking = [name for name in required if name not in header]
        for number, record in enumerate(lines):
            rows.append(_catalog_row(export, header, kept, required, number, record))
            next_row = number + 1
            if lacking:
                rows[-1]["decode_error"] = (
                    f"{export.path.name} has no {', '.join(lacking)} column in its header row; "
                    "export the table with SELECT * and a header row"
                )
            if len(rows) >= BATCH_ROWS:
                yield pa.RecordBatch.from_pylist(rows, schema=ARROW_SCHEMAS[records])
                rows = []
    except (OSError, DecodeError) as exc:
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=ARROW_SCHEMAS[records])
        reason = (
            f"{export.path.name} could not be read as a CSV export from row {next_row} on ({exc})"
        )
        yield failure_batch(export, records, next_row, reason)
        return
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=ARROW_SCHEMAS[records])


def _catalog_row(
    export: ExportFile,
    header: list[str],
    kept: dict[str, tuple[str, ...]],
    required: tuple[str, ...],
    number: int,
    record: bytes,
) -> dict:
    row: dict = {
        "source_system": SOURCE_SYSTEM,
        "capture": export.capture,
        "source_file": export.relative,
        "raw_offset": number,
        "record_length": len(record),
        "record_bytes": record,
        "decode_error": None,
    }
    try:
        cells = dict(zip(header, (c.strip() for c in csv_cells(record)), strict=False))
        row["decode_error"] = _catalog_problem(export.path.name, cells, required)
    except DecodeError as exc:
        cells, row["decode_error"] = {}, str(exc)
    for column, names in kept.items():
        row[column] = next((cells[n] for n in names if cells.get(n)), None)
    return row


def _catalog_problem(
    file_name: str, cells: dict[str, str], required: tuple[str, ...]
) -> str | None:
    missing = [name for name in required if not cells.get(name)]
    if missing:
        return f"{file_name}: the row has no {', '.join(missing)} (a value is required)"
    for name, value in cells.items():
        if name in CATALOG_INTEGERS and value and not value.lstrip("+-").isdigit():
            return f"{file_name}: {name} {value!r} is not a whole number"
    return None
