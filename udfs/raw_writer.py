"""Raw tables written by the executors with pyarrow, not through Spark's row writer.

A source's data source yields Arrow batches on the executors. Handing them to Spark's Parquet
writer makes the JVM turn every value into a row field and encode it again: for the ~60 columns
of a Log Master data record that costs about 4x the decoding itself (docs/performance.md). Here
each of the data source's partitions runs as a Spark task that writes its batches straight to
Parquet files with pyarrow (C++), one folder per raw file; the driver then registers the folders
as partitions of a Parquet table partitioned by ``source_file``. Spark still reads the table as
its own (vectorised Parquet reader), dbt sees an ordinary table.

On a cluster the executors write to the warehouse location through ``pyarrow.fs`` (a local or
shared path, ``hdfs://``, ``s3://``): the same place Spark's own writer would write.
"""

from __future__ import annotations

import hashlib
import math
import os
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

PARTITION_COLUMN = "source_file"
ROW_GROUP_ROWS = 256 * 1024
# A data source whose reader has ``split_bytes`` reads a large file as record-aligned byte
# ranges, one task each. When the options give none, the ranges are sized so that every core
# gets the same share (see balanced_split_bytes): at most SPLIT_CEILING bytes, at least
# SPLIT_FLOOR (a smaller file is not worth the driver's pass over its framing).
SPLIT_CEILING = 256 << 20
SPLIT_FLOOR = 16 << 20


@dataclass(frozen=True)
class WrittenFolder:
    """What one task wrote: a raw file's rows of one partition of the data source."""

    source_file: str
    folder: str  # URI of the partition folder
    rows: int


def partition_folder(location: str, source_file: str, load: str) -> str:
    """The folder holding ``source_file``'s rows of one load: a digest, so any path is a safe
    name, and the load, so that a file loaded again never writes into the folder it replaces."""
    digest = hashlib.sha256(source_file.encode()).hexdigest()[:24]
    return f"{location.rstrip('/')}/{PARTITION_COLUMN}={digest}-{load}"


def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    if "://" not in uri and uri.startswith("file:"):
        uri = "file://" + uri[len("file:") :]  # Hadoop's file:/x form
    return pafs.FileSystem.from_uri(uri)


def write_batches(
    batches: Iterable[pa.RecordBatch],
    schema: pa.Schema,
    location: str,
    wanted: frozenset[str] | None,
    task: str,
    load: str = "0",
) -> list[WrittenFolder]:
    """Write ``batches`` (the data source's rows, ``source_file`` among them) as Parquet files
    under ``location``, one folder per source file; rows of files not ``wanted`` are skipped."""
    data_schema = pa.schema([f for f in schema if f.name != PARTITION_COLUMN])
    writers: dict[str, tuple[pq.ParquetWriter, str]] = {}
    counts: dict[str, int] = {}
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            batch = _conform(batch, schema)
            files = batch.column(PARTITION_COLUMN)
            names = pc.unique(files).to_pylist()
            for source_file in names:
                if wanted is not None and source_file not in wanted:
                    continue
                part = batch if len(names) == 1 else batch.filter(pc.equal(files, source_file))
                if source_file not in writers:
                    folder = partition_folder(location, source_file, load)
                    filesystem, path = _filesystem(folder)
                    filesystem.create_dir(path, recursive=True)
                    writer = pq.ParquetWriter(
                        f"{path}/part-{task}-{uuid.uuid4().hex[:8]}.parquet",
                        data_schema,
                        filesystem=filesystem,
                        compression="snappy",
                        **parquet_encodings(data_schema),
                    )
                    writers[source_file] = (writer, folder)
                    counts[source_file] = 0
                table = pa.Table.from_batches([part.drop_columns([PARTITION_COLUMN])])
                writers[source_file][0].write_table(table, row_group_size=ROW_GROUP_ROWS)
                counts[source_file] += part.num_rows
    finally:
        for writer, _ in writers.values():
            writer.close()
    return [WrittenFolder(f, folder, counts[f]) for f, (_, folder) in writers.items()]


def parquet_encodings(schema: pa.Schema) -> dict[str, Any]:
    """pyarrow writer options for a raw table: min/max statistics on the flat columns that
    are not bytes (positions, offsets, names: what a filter prunes on), dictionaries on text
    only. Raw bytes, images and lists get neither: their min/max prunes nothing and their
    values rarely repeat, and with pyarrow's defaults (both on every column) the write took
    15-18 % longer at the same file size (docs/performance.md)."""
    flat = [f.name for f in schema if not _bytes_or_nested(f.type)]
    text = [
        f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
    ]
    return {"write_statistics": flat, "use_dictionary": text}


def _bytes_or_nested(arrow_type: pa.DataType) -> bool:
    return (
        pa.types.is_binary(arrow_type)
        or pa.types.is_large_binary(arrow_type)
        or pa.types.is_nested(arrow_type)
    )


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """The batch with the table's columns and types (a data source may yield a narrower
    integer or a column order of its own)."""
    if batch.schema.equals(schema):
        return batch
    arrays = [batch.column(f.name).cast(f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _run_partition(
    reader: Any,
    partition: Any,
    schema: pa.Schema,
    location: str,
    wanted: frozenset[str] | None,
    task: str,
    load: str,
) -> list[WrittenFolder]:
    batches: Iterator[pa.RecordBatch] = iter(reader.read(partition) or ())
    return write_batches(batches, schema, location, wanted, task, load)


def write_raw_table(
    spark: SparkSession,
    data_source: type,
    options: dict[str, str],
    table: str,
    wanted: list[str] | None = None,
    replace: bool = True,
) -> int:
    """Read ``data_source`` with ``options`` on the executors and write its rows into the
    Parquet table ``table`` (partitioned by ``source_file``): a new table when ``replace``,
    else new partitions (an existing partition of the same file is replaced). Only the
    files in ``wanted`` are kept when it is given. Returns the rows written."""
    source = data_source(dict(options))
    if "split_bytes" not in options and hasattr(source.reader(None), "split_bytes"):
        total = _bytes_to_read(options, wanted)
        parallelism = spark.sparkContext.defaultParallelism
        options = {**options, "split_bytes": str(balanced_split_bytes(total, parallelism))}
        source = data_source(dict(options))
    spark_schema = StructType.fromDDL(source.schema())
    arrow_schema = to_arrow_schema(spark_schema)
    columns = ", ".join(
        f"`{f.name}` {f.dataType.simpleString()}"
        for f in spark_schema
        if f.name != PARTITION_COLUMN
    )
    if replace:
        spark.sql(f"drop table if exists {table}")
    spark.sql(
        f"create table if not exists {table} ({columns}, `{PARTITION_COLUMN}` string) "
        f"using parquet partitioned by (`{PARTITION_COLUMN}`)"
    )
    location = _location(spark, table)
    reader = source.reader(spark_schema)
    partitions = list(reader.partitions())
    keep = frozenset(wanted) if wanted is not None else None
    tasks = [(f"{i:05d}", p) for i, p in enumerate(partitions)]
    load = uuid.uuid4().hex[:12]

    def run(item: tuple[str, Any]) -> list[WrittenFolder]:
        task, partition = item
        return _run_partition(reader, partition, arrow_schema, location, keep, task, load)

    written: list[WrittenFolder] = []
    if tasks:
        rdd = spark.sparkContext.parallelize(tasks, len(tasks))
        written = [w for part in rdd.map(run).collect() for w in part]
    folders = {w.source_file: w.folder for w in written}
    _register(spark, table, folders, replace)
    return sum(w.rows for w in written)


def balanced_split_bytes(
    total: int, parallelism: int, ceiling: int | None = None, floor: int | None = None
) -> int:
    """The byte size of the ranges ``total`` bytes are read in: whole rounds of
    ``parallelism`` ranges (a 164 MB file on 2 cores: two of 82 MB, not 64 + 64 + 36 MB, whose
    last range runs alone), none above ``ceiling``, none below ``floor`` (default
    :data:`SPLIT_CEILING`, :data:`SPLIT_FLOOR`)."""
    ceiling = SPLIT_CEILING if ceiling is None else ceiling
    floor = SPLIT_FLOOR if floor is None else floor
    parts = max(1, math.ceil(total / ceiling))
    parts = math.ceil(parts / max(1, parallelism)) * max(1, parallelism)
    return max(floor, math.ceil(total / parts))


def _bytes_to_read(options: dict[str, str], wanted: list[str] | None) -> int:
    """The size of the files a load reads: ``wanted`` (paths under the raw root), else every
    file under the data source's path."""
    if wanted is not None:
        root = options.get("raw_root") or os.path.dirname(options["path"])
        return sum(os.path.getsize(os.path.join(root, name)) for name in wanted)
    return sum(
        os.path.getsize(os.path.join(folder, name))
        for folder, _, names in os.walk(options["path"])
        for name in names
    )


def _location(spark: SparkSession, table: str) -> str:
    rows = spark.sql(f"describe table extended {table}").collect()
    return next(r.data_type for r in rows if r.col_name == "Location")


def _register(spark: SparkSession, table: str, folders: dict[str, str], replace: bool) -> None:
    items = sorted(folders.items())
    for start in range(0, len(items), 200):
        chunk = items[start : start + 200]
        if not replace:
            drops = ", ".join(f"partition (`{PARTITION_COLUMN}` = {_literal(f)})" for f, _ in chunk)
            spark.sql(f"alter table {table} drop if exists {drops}")
        adds = " ".join(
            f"partition (`{PARTITION_COLUMN}` = {_literal(f)}) location {_literal(folder)}"
            for f, folder in chunk
        )
        spark.sql(f"alter table {table} add if not exists {adds}")


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
