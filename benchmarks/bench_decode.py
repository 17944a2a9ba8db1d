"""Decoding throughput on local Spark, side by side with a per-record construct baseline.

    python benchmarks/bench_decode.py --records 1000000 [--cores 2] [--sizes 250000,1000000]

For each size it writes a Log Master extract of N LLDF records (one ~20-column table; inserts,
updates with two images, deletes) and times, in one Spark session on ``local[cores]``, from the
RDW file to a written Parquet table:

(a) baseline: records framed by logmart, then ``LLDF_HEADER.parse`` per record in a Python UDF;
(b) logmart headers: the ``logmart_logmaster`` data source (framing + batch header decoding);
(c) logmart full: (b) plus both row images decoded by ``logmart_logmaster_row_images`` and
    zipped into before/after maps, as ``int_logmaster_row_images_decoded`` does.

It prints records/s and records/s per core, the ratio to the baseline, and the peak memory
(RSS) of the driver JVM and of the Python workers, so that memory can be compared across sizes.
Run it on an otherwise idle machine: other Spark jobs share the same cores.
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

from udfs.batch import SPARK_TYPES, field_specs
from udfs.logmaster import control, rowimage
from udfs.logmaster.generator import generate_lldf_benchmark
from udfs.logmaster.layouts import LLDF_HEADER
from udfs.pipeline import register_udfs
from udfs.session import get_spark

SPLIT_BYTES = 64 << 20


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

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            jvm = workers = 0
            for pid, command, rss in _descendants(os.getpid()):
                if "java" in command:
                    jvm += rss
                else:
                    workers += rss
            self.peak_jvm = max(self.peak_jvm, jvm)
            self.peak_workers = max(self.peak_workers, workers)


def _descendants(root: int) -> list[tuple[int, str, int]]:
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[str, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/status") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
            rss = int(status.get("VmRSS", "0 kB").split()[0]) * 1024
            info[int(entry)] = (status.get("Name", "").strip(), rss)
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


def headers_only(spark: SparkSession, raw: Path) -> DataFrame:
    """(b) logmart's data source: framing and batch header decoding."""
    return _source(spark, raw, "data")


def full_images(spark: SparkSession, raw: Path, layout: str, names: list[str]) -> DataFrame:
    """(c) headers plus both row images, zipped into maps."""
    names_array = F.array(*[F.lit(name) for name in names])
    decoded = (
        headers_only(spark, raw)
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


def table_layout(extract: Path) -> tuple[str, list[str]]:
    """The benchmark table's layout JSON and column names, from its control file."""
    control_file = next(p for p in sorted(extract.iterdir()) if control.sniff(p))
    records = list(control.read_control_file(control_file, control.sniff(control_file)))
    dtbi = next(r.fields for r in records if r.record_type == "DTBI")
    dlci = [r.fields for r in records if r.record_type == "DLCI"]
    layout = rowimage.layout_from_control(dtbi, dlci)
    ordered = sorted(dlci, key=lambda d: d["llcolumnnum"])
    names = [d["columnname"][: d["columnnamelen"]] for d in ordered]
    return rowimage.layout_text(layout), names


def timed(frame: DataFrame, out: Path) -> tuple[float, int, PeakMemory]:
    with PeakMemory() as memory:
        started = time.perf_counter()
        frame.write.mode("overwrite").parquet(str(out))
        elapsed = time.perf_counter() - started
    rows = frame.sparkSession.read.parquet(str(out)).count()
    return elapsed, rows, memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--sizes", help="comma-separated record counts (overrides --records)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.records]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="logmart-bench-"))
    spark = get_spark(work / "warehouse", f"local[{args.cores}]", "logmart-bench")
    register_udfs(spark)
    print(f"local[{args.cores}], Spark {spark.version}, workdir {work}")
    print(f"{'records':>10} {'path':<22} {'seconds':>8} {'rec/s':>10} {'rec/s/core':>10} "
          f"{'vs (a)':>7} {'JVM MB':>7} {'py MB':>6}")
    for size in sizes:
        raw = work / f"raw-{size}"
        extract = raw / "logmaster" / "bench"
        if not extract.exists():
            generate_lldf_benchmark(extract, size, seed=1)
        layout, names = table_layout(extract)
        # Warm the Python workers once so that no path pays their start-up.
        headers_only(spark, raw).limit(1000).write.format("noop").mode("overwrite").save()
        paths = [
            ("(b) logmart headers", headers_only(spark, raw)),
            ("(c) logmart full", full_images(spark, raw, layout, names)),
        ]
        if not args.skip_baseline:
            paths.insert(0, ("(a) construct per record", baseline(spark, raw)))
        base_rate = None
        for name, frame in paths:
            elapsed, rows, memory = timed(frame, work / "out")
            rate = rows / elapsed
            base_rate = base_rate or (rate if name.startswith("(a)") else None)
            ratio = f"{rate / base_rate:6.1f}x" if base_rate else "      -"
            print(
                f"{size:>10} {name:<22} {elapsed:>8.1f} {rate:>10,.0f} "
                f"{rate / args.cores:>10,.0f} {ratio:>7} {memory.peak_jvm >> 20:>7} "
                f"{memory.peak_workers >> 20:>6}",
                flush=True,
            )
        shutil.rmtree(work / "out", ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
