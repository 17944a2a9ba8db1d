"""Base snapshots: an unload of one source table that row history starts from (docs/snapshots.md).

A user puts ``<raw>/<source>/<stream>/snapshots/<name>.csv`` (a header row, then one line per
row) or ``<name>.parquet``, and beside it a side file ``<name>.json`` (or ``.yaml``/``.yml``)
naming the table and the log position (or the time) the unload was taken at. The loader reads
every snapshot into ``raw.snapshots`` (one row per snapshot file: its table, position or time,
columns, and the problem that keeps it out, if any) and ``raw.snapshot_rows`` (one row per
table row, its values as ``map<string,string>`` rendered as the marts render row images). Both
tables are rewritten only when a snapshot file, a side file or this module changes: nothing of
the logs is decoded again for it.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from udfs.source_declaration import SNAPSHOT_FOLDER_OTHER, SNAPSHOT_KIND, SNAPSHOT_SIDE_KIND

SNAPSHOT_FOLDER = "snapshots"
DATA_SUFFIXES = {".csv": "csv", ".parquet": "parquet"}
SIDE_SUFFIXES = (".json", ".yaml", ".yml")
DATA_KIND = SNAPSHOT_KIND
SIDE_KIND = SNAPSHOT_SIDE_KIND
SIDE_KEYS = frozenset(
    {"schema", "table", "position", "taken_at", "csv_null", "encoding", "delimiter"}
)
LOAD_KEY_PROPERTY = "logmart.snapshot_load_key"

SNAPSHOTS_SCHEMA = (
    "source_system string, log_stream string, capture string, source_file string, "
    "side_file string, file_format string, table_schema string, table_name string, "
    "snapshot_position string, taken_at timestamp, columns array<string>, row_count bigint, "
    "problem string"
)
SNAPSHOT_ROWS_SCHEMA = (
    "source_system string, log_stream string, source_file string, row_number bigint, "
    "row_image map<string,string>"
)


class SnapshotProblem(ValueError):
    """Why a snapshot cannot be used: what is wrong, where, and what to do (one sentence)."""


def file_kind(relative_to_source: str) -> str | None:
    """The kind of a file at ``<stream>/snapshots/<name>`` under a source's folder (path
    relative to it, '/' separators): ``snapshot`` (a CSV or Parquet unload), ``snapshot_side``
    (its JSON/YAML side file), ``ignored`` (anything else there); None for a file elsewhere."""
    parts = relative_to_source.split("/")
    if len(parts) != 3 or parts[1] != SNAPSHOT_FOLDER:
        return None
    suffix = Path(parts[2]).suffix.lower()
    if suffix in DATA_SUFFIXES:
        return DATA_KIND
    if suffix in SIDE_SUFFIXES:
        return SIDE_KIND
    return SNAPSHOT_FOLDER_OTHER


# --- rendering values as the marts do (/work/shared/specs/README.md "Value rendering") ------------


def render_value(value: Any) -> str | None:
    """A Parquet value as the marts' row images hold it: decimals with their scale, floats as
    the shortest text that round-trips, dates ``YYYY-MM-DD``, times ``HH:MM:SS[.ffffff]``,
    timestamps ``YYYY-MM-DD HH:MM:SS[.ffffff]`` (a zoned one in UTC), binary as upper-case hex,
    NULL as None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return f"{text}.{value.microsecond:06d}" if value.microsecond else text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex().upper()
    return str(value)


# --- side files -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SideFile:
    """What a side file says: the table, the position or time, and CSV reading options."""

    table_schema: str | None
    table_name: str
    position: str | None = None
    taken_at: dt.datetime | None = None
    csv_null: str | None = None  # None: an empty CSV field is NULL
    encoding: str = "utf-8"
    delimiter: str = ","


def parse_side_file(text: str, name: str) -> SideFile:
    """The side file ``name`` (JSON, or YAML when it ends .yaml/.yml) from its ``text``."""
    import yaml

    try:
        data = json.loads(text) if name.lower().endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise SnapshotProblem(f"side file {name} is not valid JSON/YAML ({exc}); fix it") from exc
    if not isinstance(data, dict):
        raise SnapshotProblem(f"side file {name} must hold one object (table, position, ...)")
    unknown = sorted(set(data) - SIDE_KEYS)
    if unknown:
        raise SnapshotProblem(
            f"side file {name} has unknown key(s) {', '.join(unknown)}; "
            f"the keys are {', '.join(sorted(SIDE_KEYS))}"
        )
    table = data.get("table")
    if not isinstance(table, str) or not table:
        raise SnapshotProblem(f'side file {name} names no table: add "table": "<name>"')
    position, taken_at = data.get("position"), data.get("taken_at")
    if (position is None) == (taken_at is None):
        raise SnapshotProblem(
            f"side file {name} must give exactly one of position (the commit_position text "
            "the marts show) and taken_at (YYYY-MM-DD HH:MM:SS[.ffffff])"
        )
    return SideFile(
        table_schema=None if data.get("schema") is None else str(data["schema"]),
        table_name=table,
        position=None if position is None else str(position),
        taken_at=None if taken_at is None else _timestamp(taken_at, name),
        csv_null=None if data.get("csv_null") is None else str(data["csv_null"]),
        encoding=str(data.get("encoding") or "utf-8"),
        delimiter=str(data.get("delimiter") or ","),
    )


def _timestamp(value: object, name: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        parsed = value
    else:
        try:
            parsed = dt.datetime.fromisoformat(str(value))
        except ValueError as exc:
            raise SnapshotProblem(
                f"side file {name}: taken_at {value!r} is not YYYY-MM-DD HH:MM:SS[.ffffff]"
            ) from exc
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


# --- reading the unloads ----------------------------------------------------------------------


def read_csv(path: Path, side: SideFile) -> tuple[list[str], Iterator[dict[str, str | None]]]:
    """The header's column names and the rows of a CSV unload, read line by line; a field
    equal to ``side.csv_null`` (an empty field when it is not given) is NULL."""
    try:
        handle = path.open(encoding=side.encoding, newline="")
        reader = csv.reader(handle, delimiter=side.delimiter)
        header = next(reader, None)
    except (OSError, UnicodeError, LookupError) as exc:
        raise _not_text(path, side, exc) from exc
    if not header:
        handle.close()
        raise SnapshotProblem(f"{path.name} has no header row: unload it with column names")
    header = [column.strip() for column in header]
    try:
        _check_columns(header, path.name)
    except SnapshotProblem:
        handle.close()
        raise
    null = "" if side.csv_null is None else side.csv_null

    def rows() -> Iterator[dict[str, str | None]]:
        with handle:
            try:
                for fields in reader:
                    if not fields:
                        continue
                    if len(fields) != len(header):
                        raise SnapshotProblem(
                            f"{path.name} line {reader.line_num} has {len(fields)} fields, the "
                            f"header {len(header)}: export the table again (quote values "
                            "holding the delimiter)"
                        )
                    yield {
                        c: (None if v == null else v) for c, v in zip(header, fields, strict=True)
                    }
            except UnicodeError as exc:
                raise _not_text(path, side, exc) from exc

    return header, rows()


def _not_text(path: Path, side: SideFile, exc: Exception) -> SnapshotProblem:
    return SnapshotProblem(
        f"cannot read {path.name} as {side.encoding} text ({exc}); give the unload's "
        'encoding in the side file ("encoding") or export it again'
    )


def read_parquet(path: Path) -> tuple[list[str], Iterator[dict[str, str | None]]]:
    """The column names and the rows (values rendered, :func:`render_value`) of a Parquet
    unload, read one row group at a time."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several kinds for a bad file
        raise SnapshotProblem(
            f"cannot read {path.name} as Parquet ({exc}); copy the complete file again"
        ) from exc
    header = list(parquet.schema_arrow.names)
    _check_columns(header, path.name)

    def rows() -> Iterator[dict[str, str | None]]:
        for group in range(parquet.num_row_groups):
            try:
                values = parquet.read_row_group(group).to_pylist()
            except Exception as exc:  # pyarrow raises several kinds for a damaged row group
                raise SnapshotProblem(
                    f"cannot read row group {group} of {path.name} ({exc}); copy the complete "
                    "file again"
                ) from exc
            for row in values:
                yield {column: render_value(row[column]) for column in header}

    return header, rows()


def _check_columns(header: Sequence[str], name: str) -> None:
    duplicates = sorted({c for c in header if header.count(c) > 1})
    if duplicates or not all(header):
        raise SnapshotProblem(
            f"{name} has duplicate or empty column names ({', '.join(duplicates) or 'empty'}): "
            "unload it with the table's column names"
        )


# --- one snapshot, and all of them ----------------------------------------------------------


@dataclass
class Snapshot:
    """One snapshot file as the loader found it: its place, its side file, what it holds."""

    source_system: str
    log_stream: str
    capture: str
    source_file: str  # relative to the raw root
    path: Path
    side_file: str | None = None
    side_path: Path | None = None
    side: SideFile | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, str | None]] = field(default_factory=list)
    row_count: int = 0
    problem: str | None = None

    @property
    def file_format(self) -> str:
        return DATA_SUFFIXES.get(self.path.suffix.lower(), "unknown")

    def listing_row(self) -> tuple:
        side = self.side
        return (
            self.source_system, self.log_stream, self.capture, self.source_file,
            self.side_file, self.file_format,
            side.table_schema if side else None, side.table_name if side else None,
            side.position if side else None, side.taken_at if side else None,
            list(self.columns), self.row_count, self.problem,
        )  # fmt: skip


def read_side(snapshot: Snapshot) -> Snapshot:
    """Fill in what the side file says, or ``problem`` (no side file, or a bad one)."""
    try:
        if snapshot.side_path is None:
            stem = Path(snapshot.source_file).with_suffix("")
            raise SnapshotProblem(
                f"snapshot {snapshot.source_file} has no side file: add {stem}.json naming "
                "its table and position (docs/snapshots.md)"
            )
        snapshot.side = parse_side_file(
            snapshot.side_path.read_text("utf-8"), snapshot.side_file or ""
        )
    except SnapshotProblem as exc:
        snapshot.problem = str(exc)
    except (OSError, UnicodeError) as exc:
        snapshot.problem = f"cannot read {snapshot.side_file} ({exc}); copy it again"
    return snapshot


def open_unload(snapshot: Snapshot) -> tuple[list[str], Iterator[dict[str, str | None]]]:
    """The columns and the rows (read as they are iterated) of a snapshot whose side file was
    read; :class:`SnapshotProblem` when the unload cannot be used, now or while iterating."""
    assert snapshot.side is not None, "read_side first"
    try:
        if snapshot.file_format == "csv":
            return read_csv(snapshot.path, snapshot.side)
        return read_parquet(snapshot.path)
    except OSError as exc:
        raise SnapshotProblem(f"cannot read {snapshot.source_file} ({exc}); copy it again") from exc


def read_snapshot(snapshot: Snapshot) -> Snapshot:
    """The side file, columns and rows of one snapshot, in this process (the loader reads the
    rows in Spark tasks instead, :func:`load_snapshots`, through the same :func:`unload_rows`);
    or ``problem``."""
    read_side(snapshot)
    if snapshot.problem is not None:
        return snapshot
    columns, rows = [], []
    for _, number, row, header, problem in unload_rows(snapshot):
        if number == HEADER_ROW:
            columns = header
        elif number == PROBLEM_ROW:
            snapshot.problem = problem
        else:
            rows.append(row)
    if snapshot.problem is None:
        snapshot.columns, snapshot.rows = columns, rows
    snapshot.row_count = len(snapshot.rows)
    return snapshot


def find_snapshots(files: Iterable[Any]) -> tuple[list[Snapshot], list[Any]]:
    """The snapshots among the raw folder's files (``udfs.raw_files.RawFile``, kinds
    :data:`DATA_KIND`/:data:`SIDE_KIND`), each paired with the side file of the same name,
    and the side files that pair with no snapshot."""
    files = list(files)
    sides = {str(Path(f.source_file).with_suffix("")): f for f in files if f.file_kind == SIDE_KIND}
    snapshots, used = [], set()
    for f in files:
        if f.file_kind != DATA_KIND:
            continue
        side = sides.get(str(Path(f.source_file).with_suffix("")))
        if side is not None:
            used.add(side.source_file)
        snapshots.append(
            Snapshot(
                f.source_system, f.log_stream, f.capture, f.source_file, f.path,
                side.source_file if side else None, side.path if side else None,
            )
        )  # fmt: skip
    orphans = [s for s in sides.values() if s.source_file not in used]
    return snapshots, orphans


def load_key(files: Iterable[Any]) -> str:
    """What the snapshot tables depend on: the snapshot and side files (paths, bytes) and
    this module's code."""
    listed = sorted(
        (f.source_file, f.file_kind, f.content_hash)
        for f in files
        if f.file_kind in (DATA_KIND, SIDE_KIND)
    )
    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return hashlib.sha256(json.dumps([listed, code]).encode()).hexdigest()


# What a task reading one unload yields: its header (row_number 0), its rows (1, 2, ...), and,
# when the unload turns out unusable, its problem (row_number -1; the rows it gave are dropped).
_TASK_SCHEMA = (
    "source_file string, row_number bigint, row_image map<string,string>, "
    "columns array<string>, problem string"
)
HEADER_ROW, PROBLEM_ROW = 0, -1


def unload_rows(snapshot: Snapshot) -> Iterator[tuple]:
    """One snapshot's rows as a Spark task reads them (the shape of ``_TASK_SCHEMA``)."""
    name = snapshot.source_file
    try:
        columns, rows = open_unload(snapshot)
        yield (name, HEADER_ROW, None, columns, None)
        for number, row in enumerate(rows, start=1):
            yield (name, number, row, None, None)
    except SnapshotProblem as exc:
        yield (name, PROBLEM_ROW, None, None, str(exc))
    except (OSError, UnicodeError) as exc:
        yield (name, PROBLEM_ROW, None, None, f"cannot read {name} ({exc}); copy it again")


def load_snapshots(spark: Any, files: list[Any], schema: str = "raw") -> bool:
    """Write ``<schema>.snapshots`` and ``<schema>.snapshot_rows`` from the snapshot files
    among ``files`` when they (or this module) changed since the last build; True when
    written. A snapshot that cannot be used is listed with its ``problem`` and no rows.

    The driver reads the side files only; each unload is read by a Spark task of its own, row
    by row, so a large table's snapshot is never held in memory (on a cluster the executors
    read it, as they read the logs)."""

    key = load_key(files)
    if _stored_key(spark, f"{schema}.snapshots") == key and spark.catalog.tableExists(
        f"{schema}.snapshot_rows"
    ):
        return False
    snapshots, orphans = find_snapshots(files)
    readable = [s for s in map(read_side, snapshots) if s.problem is None]
    if readable:
        _read_unloads(spark, readable, f"{schema}.snapshot_rows")
    else:
        _write(spark, f"{schema}.snapshot_rows", [], SNAPSHOT_ROWS_SCHEMA)
    listed = [s.listing_row() for s in snapshots]
    for side in orphans:
        problem = (
            f"side file {side.source_file} has no snapshot beside it (a .csv or .parquet "
            "file of the same name): copy the unload in or remove the side file"
        )
        listed.append(
            (side.source_system, side.log_stream, side.capture, side.source_file,
             side.source_file, "none", None, None, None, None, [], 0, problem)
        )  # fmt: skip
    _write(spark, f"{schema}.snapshots", listed, SNAPSHOTS_SCHEMA)
    spark.sql(f"alter table {schema}.snapshots set tblproperties ('{LOAD_KEY_PROPERTY}' = '{key}')")
    return True


def _read_unloads(spark: Any, readable: list[Snapshot], table: str) -> None:
    """Read ``readable`` snapshots' unloads in Spark tasks (one each) into ``table``; fill in
    each one's columns and row count, or the problem found while reading it (its rows are
    then left out)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    read = spark.createDataFrame(
        spark.sparkContext.parallelize(readable, len(readable)).flatMap(unload_rows),
        _TASK_SCHEMA,
    ).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        summary = read.groupBy("source_file").agg(
            F.max(F.when(F.col("row_number") == HEADER_ROW, F.col("columns"))).alias("columns"),
            F.max("problem").alias("problem"),
            F.count(F.when(F.col("row_number") > HEADER_ROW, True)).alias("row_count"),
        )
        found = {row["source_file"]: row for row in summary.collect()}
        for snapshot in readable:
            row = found[snapshot.source_file]
            snapshot.problem = row["problem"]
            snapshot.columns = [] if row["problem"] else list(row["columns"] or [])
            snapshot.row_count = 0 if row["problem"] else row["row_count"]
        places = spark.createDataFrame(
            [(s.source_system, s.log_stream, s.source_file) for s in readable if s.problem is None],
            "source_system string, log_stream string, source_file string",
        )
        rows = read.where(F.col("row_number") > HEADER_ROW).join(F.broadcast(places), "source_file")
        _write(spark, table, rows.select(*_ROW_COLUMNS), None)
    finally:
        read.unpersist()


_ROW_COLUMNS = ("source_system", "log_stream", "source_file", "row_number", "row_image")


def _write(spark: Any, table: str, rows: Any, schema: str | None) -> None:
    frame = rows if schema is None else spark.createDataFrame(rows, schema)
    frame.coalesce(1).write.mode("overwrite").format("parquet").saveAsTable(table)


def _stored_key(spark: Any, table: str) -> str | None:
    if not spark.catalog.tableExists(table):
        return None
    for row in spark.sql(f"show tblproperties {table}").collect():
        if row[0] == LOAD_KEY_PROPERTY:
            return row[1]
    return None
