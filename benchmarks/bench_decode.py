"""Decoding throughput on local Spark, side by side with a per-record construct baseline.

    python benchmarks/bench_decode.py --records 1000000 [--cores 2] [--sizes 250000,1000000]

For each size it writes a Log Master extract of N LLDF records (one ~20-column table; inserts,
updates with two images, deletes) and times, in one Spark session on ``local[cores]``, from the
RDW file to a written Parquet table:

(a) baseline: records framed by logmart, then ``LLDF_HEADER.parse`` per record in a Python UDF,
    written by Spark;
(b) logmart headers: the raw load of ``logmart build`` (udfs/raw_writer.py): the
    ``logmart_logmaster`` data source's partitions run as Spark tasks (framing + batch header
    decoding) that write Parquet with pyarrow, registered as a partitioned table;
(c) logmart full: (b) with both row images decoded as well (option ``images``, the values
    ``int_logmaster_row_images_decoded`` takes for one-segment records);
(c') the same as (c) the way it was done before the raw writer: the data source read by Spark,
    the images by the UDF ``logmart_logmaster_row_images``, zipped into maps, written by Spark.

and, with the same N, a solidDB SYS_LOG export (Parquet, one 5-column table: TRX_START, inserts,
update pairs, COMMIT), from the export file to a written Parquet table:

(d) solidDB rows: the raw load of the ``logmart_soliddb`` data source (typed SYS_LOG rows,
    LOGADDR hex, row bytes);
(e) solidDB full: (d) plus each row record's DATA decoded by ``logmart_soliddb_row`` and zipped
    into a map, as ``int_soliddb_row_images_decoded`` does.

and, with the same N, a Db2 LUW capture (db2ReadLog output with filter data, little-endian,
inserts into one 4-column table, a commit every 100), from the .log file to a written table:

(f) Db2 LUW baseline: records framed by logmart, then the construct ``log_manager_header``
    and ``insert_record`` ``Struct.parse`` per record in a Python UDF;
(g) Db2 LUW records: the raw load of the ``logmart_db2luw`` data source (framing checks + every
    header and component field typed, images as bytes);
(h) Db2 LUW full: (g) with option ``images``: each record's images decoded column-at-a-time
    with its table's catalog layout in the data source (udfs/db2luw/batch_rows.py), the
    values ``int_db2luw_row_images_decoded`` takes where the layout is the one in force;
(h') the same as (h) the way it was done before: the data source read by Spark, each
    insert's image decoded by the UDF ``logmart_db2luw_row`` (now column-at-a-time per layout
    too) and zipped into a map, written by Spark.

``--sources`` picks some of logmaster, soliddb, db2luw (all by default).

Every path first runs once, untimed, on 20,000 records (one-off costs of a process: Python
workers importing their modules, the metastore's first DDL). It prints records/s, records/s
per core, records per CPU second (the CPU time of the JVM and the Python workers together: the
figure to trust on a busy machine), the ratio to the baseline, and the peak memory (RSS) of
the driver JVM and of the Python workers, so that memory can be compared across sizes. Run it
on an otherwise idle machine: other jobs share the same cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from logmart_generators.db2luw import generate_benchmark as generate_db2luw_benchmark
from logmart_generators.logmaster import generate_lldf_benchmark
from logmart_generators.soliddb import generate_benchmark
from udfs.batch import SPARK_TYPES, field_specs
from udfs.db2luw import functions as db2luw_functions
from udfs.db2luw import rows as db2luw_rows
from udfs.db2luw.layouts import layouts as db2luw_layouts
from udfs.db2luw.source import Db2LuwDataSource
from udfs.logmaster import control
from udfs.logmaster import rows as row_images
from udfs.logmaster.layouts import LLDF_HEADER
from udfs.logmaster.source import LogMasterDataSource
from udfs.pipeline import register_udfs
from udfs.raw_writer import write_raw_table
from udfs.session import get_spark
from udfs.soliddb import functions as soliddb_functions
from udfs.soliddb.catalog import read_catalog
from udfs.soliddb.source import SolidDbDataSource

# The paths that read the data source through Spark (the baselines, (c'), (h')) split files at
# this size; the raw loads ((b), (c), (g), (h)) plan their ranges as `logmart build` does
# (udfs.raw_writer.balanced_split_bytes: the same share for every core).
SPLIT_BYTES = 64 << 20
WARM_UP_RECORDS = 20_000


class PeakMemory:
    """Samples the RSS of this process's descendants (JVM, Python workers) every 0.2 s."""

    def __init__(self) -> None:
        self.peak_jvm = 0
        self.peak_workers = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def cpu_seconds(self) -> float:
        """User + system CPU of this process's descendants (live ones and those they reaped)."""
        return sum(cpu for _, _, _, cpu in _descendants(os.getpid()))

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            jvm = workers = 0
            for _, command, rss, _ in _descendants(os.getpid()):
                if "java" in command:
                    jvm += rss
                else:
                    workers += rss
            self.peak_jvm = max(self.peak_jvm, jvm)
            self.peak_workers = max(self.peak_workers, workers)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _descendants(root: int) -> list[tuple[int, str, int, float]]:
    """(pid, name, RSS bytes, CPU seconds) of every descendant process of ``root``."""
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[str, int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read().rsplit(")", 1)[1].split()
            parent = int(stat[1])
            cpu = sum(int(ticks) for ticks in stat[11:15]) / CLOCK_TICKS  # utime..cstime
            with open(f"/proc/{entry}/status") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
            rss = int(status.get("VmRSS", "0 kB").split()[0]) * 1024
            info[int(entry)] = (status.get("Name", "").strip(), rss, cpu)
            children.setdefault(parent, []).append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in info:
            found.append((pid, *info[pid]))
        todo.extend(children.get(pid, []))
    return found


def _source(spark: SparkSession, raw: Path, records: str) -> DataFrame:
    return (
        spark.read.format("logmart_logmaster")
        .option("path", str(raw / "logmaster"))
        .option("raw_root", str(raw))
        .option("records", records)
        .option("split_bytes", str(SPLIT_BYTES))
        .load()
    )


def baseline(spark: SparkSession, raw: Path) -> DataFrame:
    """(a) construct's Struct.parse per record in a Python UDF."""
    specs = field_specs(LLDF_HEADER)
    header_type = "struct<" + ", ".join(f"{s.column}: {SPARK_TYPES[s.kind]}" for s in specs) + ">"

    @F.udf(header_type)
    def parse_header(record: bytes) -> dict:
        parsed = LLDF_HEADER.parse(record[4:])
        return {spec.column: parsed[spec.name] for spec in specs}

    frames = _source(spark, raw, "frames")
    return frames.select("source_file", "raw_offset", parse_header("record_bytes").alias("h"))


class RawLoad:
    """A path that is logmart's raw load: a data source written by udfs/raw_writer.py."""

    def __init__(self, spark: SparkSession, data_source: type, options: dict[str, str]):
        self.spark = spark
        self.data_source = data_source
        self.options = options

    def run(self, table: str) -> int:
        return write_raw_table(self.spark, self.data_source, self.options, table)


def _raw_load(spark: SparkSession, raw: Path, data_source: type, folder: str, **options) -> RawLoad:
    base = {"path": str(raw / folder), "raw_root": str(raw)}
    return RawLoad(spark, data_source, {**base, **options})


def headers_only(spark: SparkSession, raw: Path) -> RawLoad:
    """(b) logmart's raw load: framing and batch header decoding, written by pyarrow."""
    return _raw_load(spark, raw, LogMasterDataSource, "logmaster", records="data")


def full_raw(spark: SparkSession, raw: Path) -> RawLoad:
    """(c) logmart's raw load with the row images of one-segment records."""
    return _raw_load(spark, raw, LogMasterDataSource, "logmaster", records="data", images="true")


def full_images(spark: SparkSession, raw: Path, layout: str, names: list[str]) -> DataFrame:
    """(c') headers read by Spark plus both row images by the UDF, zipped into maps."""
    names_array = F.array(*[F.lit(name) for name in names])
    decoded = (
        _source(spark, raw, "data")
        .withColumn("layout", F.lit(layout))
        .withColumn(
            "images",
            F.expr(
                "logmart_logmaster_row_images("
                "substring(record_bytes, data_offset + 1, data_length), change_type, layout)"
            ),
        )
    )
    return decoded.select(
        *[c for c in decoded.columns if c not in ("layout", "images")],
        F.map_from_arrays(names_array, F.col("images.before_values")).alias("before_image"),
        F.map_from_arrays(names_array, F.col("images.after_values")).alias("after_image"),
        F.col("images.error").alias("image_error"),
    )


def soliddb_rows(spark: SparkSession, raw: Path) -> DataFrame:
    """The solidDB data source read by Spark (input of (e))."""
    return (
        spark.read.format("logmart_soliddb")
        .option("path", str(raw / "soliddb"))
        .option("raw_root", str(raw))
        .load()
    )


def soliddb_raw(spark: SparkSession, raw: Path) -> RawLoad:
    """(d) the solidDB raw load: typed SYS_LOG rows written by pyarrow."""
    return RawLoad(spark, SolidDbDataSource, {"path": str(raw / "soliddb"), "raw_root": str(raw)})


def soliddb_full(spark: SparkSession, raw: Path, layout: str, names: list[str]) -> DataFrame:
    """(e) (d) plus row records decoded and zipped into a map."""
    names_array = F.array(*[F.lit(name) for name in names])
    decoded = (
        soliddb_rows(spark, raw)
        .withColumn("layout", F.when(F.col("recid").isin(1, 3, 4, 5), F.lit(layout)))
        .withColumn("decoded_row", F.expr("logmart_soliddb_row(data, layout)"))
    )
    return decoded.select(
        *[c for c in decoded.columns if c not in ("layout", "decoded_row")],
        F.when(
            F.col("decoded_row.values").isNotNull(),
            F.map_from_arrays(names_array, F.col("decoded_row.values")),
        ).alias("row_values"),
        F.col("decoded_row.error").alias("row_error"),
    )


def soliddb_layout(capture: Path) -> tuple[str, list[str]]:
    """The solidDB benchmark table's layout JSON and column names, from its catalog export."""
    (layout,) = read_catalog(capture / "catalog")
    codecs = {"char_codec": "utf-8", "wchar_codec": "utf-16-be"}
    return soliddb_functions.layout_to_json(layout, codecs), [c.name for c in layout.columns]


def _db2luw_source(spark: SparkSession, raw: Path, records: str) -> DataFrame:
    return (
        spark.read.format("logmart_db2luw")
        .option("path", str(raw / "db2luw"))
        .option("raw_root", str(raw))
        .option("records", records)
        .option("split_bytes", str(SPLIT_BYTES))
        .load()
    )


def db2luw_baseline(spark: SparkSession, raw: Path) -> DataFrame:
    """(f) construct's Struct.parse per record: log manager header, then the insert record."""
    ns = db2luw_layouts("little")

    @F.udf("struct<lsn: bigint, tid: string, record_type: int, rid: string, image: binary>")
    def parse_record(record: bytes) -> dict:
        header = ns.log_manager_header.parse(record[56:])
        out = {"lsn": header.lsn, "tid": header.tid.hex(), "record_type": header.record_type}
        if header.record_type == 0x4E:
            insert = ns.insert_record.parse(record[56 + 40 :])
            out.update(rid=insert.rid.hex(), image=insert.record_header_and_data.data)
        return out

    frames = _db2luw_source(spark, raw, "frames")
    return frames.select("source_file", "raw_offset", parse_record("record_bytes").alias("r"))


def db2luw_records(spark: SparkSession, raw: Path) -> DataFrame:
    """The Db2 LUW data source read by Spark (input of (h))."""
    return _db2luw_source(spark, raw, "log")


def db2luw_raw(spark: SparkSession, raw: Path) -> RawLoad:
    """(g) the Db2 LUW raw load: every record typed, images as bytes, written by pyarrow."""
    return _raw_load(spark, raw, Db2LuwDataSource, "db2luw", records="log")


def db2luw_full_raw(spark: SparkSession, raw: Path) -> RawLoad:
    """(h) the Db2 LUW raw load with row images decoded in the data source."""
    return _raw_load(spark, raw, Db2LuwDataSource, "db2luw", records="log", images="true")


def db2luw_full(spark: SparkSession, raw: Path, layout: str, names: list[str]) -> DataFrame:
    """(h') (g) read by Spark plus each insert's after image by the UDF, zipped into a map."""
    names_array = F.array(*[F.lit(name) for name in names])
    decoded = (
        db2luw_records(spark, raw)
        .withColumn("layout", F.when(F.col("kind") == "row_insert", F.lit(layout)))
        .withColumn("decoded_row", F.expr("logmart_db2luw_row(after_image, layout, byteorder)"))
    )
    return decoded.select(
        *[c for c in decoded.columns if c not in ("layout", "decoded_row")],
        F.when(
            F.col("decoded_row.values").isNotNull(),
            F.map_from_arrays(names_array, F.col("decoded_row.values")),
        ).alias("after_values"),
        F.col("decoded_row.error").alias("row_error"),
    )


def db2luw_layout(capture: Path) -> tuple[str, list[str]]:
    """The Db2 LUW benchmark table's layout JSON and column names, from its catalog export."""
    (layout,) = db2luw_rows.read_catalog(capture / "catalog").values()
    return db2luw_functions.layout_to_json(layout, {}), [c.name for c in layout.columns]


def table_layout(extract: Path) -> tuple[str, list[str]]:
    """The benchmark table's layout JSON and column names, from its control file."""
    control_file = next(p for p in sorted(extract.iterdir()) if control.sniff(p))
    records = list(control.read_control_file(control_file, control.sniff(control_file)))
    dtbi = next(r.fields for r in records if r.record_type == "DTBI")
    dlci = [r.fields for r in records if r.record_type == "DLCI"]
    layout = row_images.layout_from_control(dtbi, dlci)
    ordered = sorted(dlci, key=lambda d: d["llcolumnnum"])
    names = [d["columnname"][: d["columnnamelen"]] for d in ordered]
    return row_images.layout_text(layout), names


def timed(path: DataFrame | RawLoad, out: Path) -> tuple[float, int, float, PeakMemory]:
    """Seconds, rows written, CPU seconds (JVM + Python workers) and peak memory of a path."""
    with PeakMemory() as memory:
        cpu = memory.cpu_seconds()
        started = time.perf_counter()
        if isinstance(path, RawLoad):
            rows = path.run("bench_raw.out")
        else:
            path.write.mode("overwrite").parquet(str(out))
        elapsed = time.perf_counter() - started
        cpu = memory.cpu_seconds() - cpu
    if not isinstance(path, RawLoad):
        rows = path.sparkSession.read.parquet(str(out)).count()
    return elapsed, rows, cpu, memory


def logmaster_paths(spark: SparkSession, raw: Path, size: int, skip_baseline: bool) -> list:
    extract = raw / "logmaster" / "bench"
    if not extract.exists():
        generate_lldf_benchmark(extract, size, seed=1)
    layout, names = table_layout(extract)
    # Warm the Python workers once so that no path pays their start-up.
    _source(spark, raw, "data").limit(1000).write.format("noop").mode("overwrite").save()
    paths = [
        ("(b) logmart headers", headers_only(spark, raw)),
        ("(c) logmart full", full_raw(spark, raw)),
        ("(c') full, Spark writer", full_images(spark, raw, layout, names)),
    ]
    if not skip_baseline:
        paths.insert(0, ("(a) construct per record", baseline(spark, raw)))
    return paths


def soliddb_paths(spark: SparkSession, raw: Path, size: int) -> list:
    capture = raw / "soliddb" / "bench"
    if not capture.exists():
        generate_benchmark(capture / "sys_log.parquet", size, seed=1)
    layout, names = soliddb_layout(capture)
    soliddb_rows(spark, raw).limit(1000).write.format("noop").mode("overwrite").save()
    return [
        ("(d) solidDB rows", soliddb_raw(spark, raw)),
        ("(e) solidDB full", soliddb_full(spark, raw, layout, names)),
    ]


def db2luw_paths(spark: SparkSession, raw: Path, size: int, skip_baseline: bool) -> list:
    capture = raw / "db2luw" / "bench"
    if not capture.exists():
        generate_db2luw_benchmark(capture / "S0000000.log", size, seed=1)
    layout, names = db2luw_layout(capture)
    db2luw_records(spark, raw).limit(1000).write.format("noop").mode("overwrite").save()
    paths = [
        ("(g) Db2 LUW records", db2luw_raw(spark, raw)),
        ("(h) Db2 LUW full", db2luw_full_raw(spark, raw)),
        ("(h') full, Spark writer", db2luw_full(spark, raw, layout, names)),
    ]
    if not skip_baseline:
        paths.insert(0, ("(f) Db2 LUW construct", db2luw_baseline(spark, raw)))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--sizes", help="comma-separated record counts (overrides --records)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--sources", default="logmaster,soliddb,db2luw")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.records]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="logmart-bench-"))
    spark = get_spark(work / "warehouse", f"local[{args.cores}]", "logmart-bench")
    register_udfs(spark)
    spark.sql("create database if not exists bench_raw")
    print(f"local[{args.cores}], Spark {spark.version}, workdir {work}")
    print(
        f"{'records':>10} {'path':<24} {'seconds':>8} {'rec/s':>10} {'rec/s/core':>10} "
        f"{'rec/cpu-s':>10} {'vs base':>7} {'JVM MB':>7} {'py MB':>6}"
    )

    def all_paths(size: int) -> list:
        raw = work / f"raw-{size}"
        paths = []
        if "logmaster" in args.sources:
            paths += logmaster_paths(spark, raw, size, args.skip_baseline)
        if "soliddb" in args.sources:
            paths += soliddb_paths(spark, raw, size)
        if "db2luw" in args.sources:
            paths += db2luw_paths(spark, raw, size, args.skip_baseline)
        return paths

    # Every path once on a small input first, untimed: the first run of a path in a process
    # pays one-off costs (Python workers importing pyarrow/numpy/udfs, the metastore's first
    # DDL; about 3 s for (b)) that the figures below should not spread over N records.
    for _, path in all_paths(WARM_UP_RECORDS):
        timed(path, work / "out")
    print(f"(warmed up: every path once on {WARM_UP_RECORDS:,} records, not timed)")
    for size in sizes:
        paths = all_paths(size)
        base_rate = None
        for name, path in paths:
            elapsed, rows, cpu, memory = timed(path, work / "out")
            rate = rows / elapsed
            if name[:3] in ("(a)", "(f)"):  # each source's baseline
                base_rate = rate
            compared = base_rate and name[:3] in ("(a)", "(b)", "(c)", "(f)", "(g)", "(h)")
            ratio = f"{rate / base_rate:6.1f}x" if compared else "      -"
            print(
                f"{size:>10} {name:<24} {elapsed:>8.1f} {rate:>10,.0f} "
                f"{rate / args.cores:>10,.0f} {rows / max(cpu, 1e-9):>10,.0f} {ratio:>7} "
                f"{memory.peak_jvm >> 20:>7} {memory.peak_workers >> 20:>6}",
                flush=True,
            )
        shutil.rmtree(work / "out", ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
