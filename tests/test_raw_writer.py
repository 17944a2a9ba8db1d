"""udfs/raw_writer.py: a data source's rows written by the executors with pyarrow, registered
as a Parquet table partitioned by source file, read back by Spark with the source's types."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
from pyspark import cloudpickle
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from udfs.raw_writer import write_raw_table

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
