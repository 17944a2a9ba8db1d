"""udfs/raw_writer.py: a data source's rows written by the executors with pyarrow, registered
as a Parquet table partitioned by source file, read back by Spark with the source's types."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark import cloudpickle
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from udfs.raw_writer import write_batches, write_raw_table

# The test's data source runs on Spark's Python workers, which cannot import `tests`: ship
# this module's classes by value, as a real data source's module is shipped installed.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class _Part(InputPartition):
    def __init__(self, source_file: str, rows: int, value: int):
        super().__init__(source_file)
        self.source_file, self.rows, self.value = source_file, rows, value


class _Reader(DataSourceReader):
    def __init__(self, parts: list[tuple[str, int, int]]):
        self.parts = parts

    def partitions(self):
        return [_Part(*p) for p in self.parts]

    def read(self, partition: _Part):
        n = partition.rows
        yield pa.RecordBatch.from_pydict(
            {
                "source_file": [partition.source_file] * n,
                "raw_offset": list(range(n)),  # int64 where the table says int: cast
                "tags": [["a", None]] * n,
                "payload": [bytes([partition.value])] * n,
            }
        )


class _Source(DataSource):
    """Options: parts = 'file:rows:value;...'."""

    def schema(self) -> str:
        return "source_file string, raw_offset int, tags array<string>, payload binary"

    def reader(self, schema) -> DataSourceReader:
        parts = [p.split(":") for p in self.options["parts"].split(";")]
        return _Reader([(f, int(n), int(v)) for f, n, v in parts])


def test_rows_land_in_one_partition_per_file_with_the_sources_types(spark):
    spark.sql("create database if not exists raw_writer_test")
    table = "raw_writer_test.t"
    written = write_raw_table(spark, _Source, {"parts": "a/x.log:3:1;b/it's.log:2:2"}, table)
    assert written == 5
    rows = spark.sql(f"select * from {table} order by source_file, raw_offset").collect()
    assert [(r.source_file, r.raw_offset, r.payload) for r in rows] == [
        ("a/x.log", 0, b"\x01"),
        ("a/x.log", 1, b"\x01"),
        ("a/x.log", 2, b"\x01"),
        ("b/it's.log", 0, b"\x02"),
        ("b/it's.log", 1, b"\x02"),
    ]
    assert rows[0].tags == ["a", None]
    types = {f.name: f.dataType.simpleString() for f in spark.table(table).schema}
    assert types["raw_offset"] == "int" and types["payload"] == "binary"
    partitions = [r[0] for r in spark.sql(f"show partitions {table}").collect()]
    assert len(partitions) == 2


def test_a_file_loaded_again_replaces_its_partition_and_keeps_the_others(spark, tmp_path: Path):
    spark.sql("create database if not exists raw_writer_test")
    table = "raw_writer_test.again"
    write_raw_table(spark, _Source, {"parts": "a:3:1;b:2:2"}, table)
    # only file a again, with other bytes; b stays as it was
    write_raw_table(spark, _Source, {"parts": "a:1:9;c:4:3"}, table, wanted=["a"], replace=False)
    counts = dict(
        spark.sql(f"select source_file, count(*) from {table} group by source_file").collect()
    )
    assert counts == {"a": 1, "b": 2}
    payload = spark.sql(f"select payload from {table} where source_file = 'a'").first()[0]
    assert payload == b"\x09"


MB = 1 << 20


def test_ranges_give_every_core_the_same_share():
    from udfs.raw_writer import balanced_split_bytes

    # a 164 MB file on 2 cores: two 82 MB ranges, not 64 + 64 + 36 MB (the last one alone)
    assert balanced_split_bytes(164 * MB, 2) == 82 * MB
    # two 243.5 MB files (487 MB) on 2 cores: each file whole, one task per core
    assert balanced_split_bytes(487 * MB, 2) == math.ceil(487 * MB / 2)
    # 2 GB on 2 cores: 8 ranges of 256 MB, four rounds
    assert balanced_split_bytes(2048 * MB, 2) == 256 * MB
    # 1 GB on 64 cores: 64 ranges of 16 MB; a small capture is not split at all
    assert balanced_split_bytes(1024 * MB, 64) == 16 * MB
    assert balanced_split_bytes(300 * 1024, 2) == 16 * MB
    assert balanced_split_bytes(0, 2) == 16 * MB


def test_a_file_is_read_in_one_range_per_core_when_no_split_is_given(spark, tmp_path, monkeypatch):
    """The Db2 LUW data source (its reader has ``split_bytes``) without the option: the file
    is read in balanced ranges, one task per core, and the rows are those of one whole read."""
    from logmart_generators.db2luw import generate_benchmark
    from udfs import raw_writer
    from udfs.db2luw.source import Db2LuwDataSource

    path = tmp_path / "db2luw" / "bench" / "S0000000.log"
    generate_benchmark(path, 20_000, seed=1)
    monkeypatch.setattr(raw_writer, "SPLIT_FLOOR", 64 * 1024)  # planning runs on the driver
    options = {"path": str(tmp_path / "db2luw"), "raw_root": str(tmp_path), "records": "log"}
    cores = spark.sparkContext.defaultParallelism
    split = write_raw_table(spark, Db2LuwDataSource, options, "default.raw_writer_split")
    whole = write_raw_table(
        spark, Db2LuwDataSource, {**options, "split_bytes": str(1 << 40)},
        "default.raw_writer_whole",
    )  # fmt: skip
    assert split == whole > 20_000
    tasks = {
        f.rsplit("/", 1)[1].split("-")[1]  # part-<task>-<uuid>.parquet
        for f in spark.table("default.raw_writer_split").inputFiles()
    }
    assert len(tasks) == cores
    columns = "raw_offset, record_type, lsn, decode_error, md5(record_bytes)"
    assert (
        spark.sql(
            f"select {columns} from default.raw_writer_split except all "
            f"select {columns} from default.raw_writer_whole"
        ).count()
        == 0
    )


def test_raw_files_keep_statistics_and_dictionaries_where_they_help(tmp_path: Path):
    # min/max on positions and names (what a filter prunes on), dictionaries on text; none on
    # raw bytes or lists, whose min/max prunes nothing and whose values rarely repeat
    schema = pa.schema(
        [
            ("raw_offset", pa.int64()),
            ("record_type", pa.string()),
            ("record_bytes", pa.binary()),
            ("values", pa.list_(pa.string())),
            ("source_file", pa.string()),
        ]
    )
    batch = pa.RecordBatch.from_pydict(
        {
            "raw_offset": [0, 40, 80],
            "record_type": ["LLDF", "LLDF", "DLCI"],
            "record_bytes": [b"\x00\x01", b"\xff", b"\x10"],
            "values": [["a"], ["b", None], []],
            "source_file": ["x/f1"] * 3,
        },
        schema=schema,
    )
    [written] = write_batches([batch], schema, str(tmp_path), None, "00000")
    [path] = Path(written.folder).glob("*.parquet")
    row_group = pq.ParquetFile(path).metadata.row_group(0)
    columns = {
        row_group.column(i).path_in_schema: row_group.column(i)
        for i in range(row_group.num_columns)
    }
    assert written.rows == 3
    assert columns["raw_offset"].statistics.min == 0
    assert columns["raw_offset"].statistics.max == 80
    assert columns["record_type"].statistics.min == "DLCI"
    assert "RLE_DICTIONARY" in columns["record_type"].encodings
    assert columns["record_bytes"].statistics is None
    assert "RLE_DICTIONARY" not in columns["record_bytes"].encodings
    assert columns["values.list.element"].statistics is None
    assert "RLE_DICTIONARY" not in columns["raw_offset"].encodings


def test_content_hashes_are_the_files_sha256_hashed_here_or_on_the_executors(
    spark, tmp_path: Path, monkeypatch
):
    """A few small files are hashed in this process, many bytes by a Spark job: the same
    hashes, and a file whose size and modification time are known is not read again."""
    import hashlib

    from udfs import raw_files

    paths = []
    for i, size in enumerate((0, 5, 3 * raw_files.HASH_CHUNK + 7)):
        path = tmp_path / f"f{i}.bin"
        path.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
        paths.append(path)
    expected = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}

    def listed() -> list:
        return [
            raw_files.RawFile("db2luw", "c", str(p), "log", p.stat().st_size,
                              p.stat().st_mtime_ns, p)
            for p in paths
        ]  # fmt: skip

    for limit in (raw_files.DRIVER_HASH_BYTES, 0):  # here, then on the executors
        monkeypatch.setattr(raw_files, "DRIVER_HASH_BYTES", limit)
        files = listed()
        assert raw_files.fill_content_hashes(spark, files, {}) == len(paths)
        assert {f.source_file: f.content_hash for f in files} == expected
    files = listed()
    known = {f.source_file: (f.size_bytes, f.modified_ns, "kept") for f in files}
    assert raw_files.fill_content_hashes(spark, files, known) == 0
    assert {f.content_hash for f in files} == {"kept"}


def test_a_builds_raw_tables_are_known_as_partitioned_by_file_and_others_are_not(spark, demo):
    """load_raw decodes every file again when a raw table is not partitioned by file alone; the
    check is one catalog query (`pipeline.partitioned_by_file`), which must know a build's
    tables for what they are."""
    from udfs.pipeline import RAW_TABLES, partitioned_by_file

    found = partitioned_by_file(spark)
    assert {t.name for t in RAW_TABLES} <= found
    assert not {"files", "captures"} & found  # the listing: one small table each
    spark.sql(
        "create table raw.unpartitioned_probe using parquet as select 'f' as source_file, 1 as a"
    )
    try:
        assert "unpartitioned_probe" not in partitioned_by_file(spark)
    finally:
        spark.sql("drop table raw.unpartitioned_probe")
