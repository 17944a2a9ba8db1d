"""Db2 LUW record decoding without Spark: the column-at-a-time path against record by record.

Writes ``generate_benchmark``'s capture (inserts into one table, a commit every 100) and times,
on one core: decoding frame batches (``batch_records.log_batch`` vs
``readers.log_batch_per_record``), the inserts' row images (``batch_rows.decode_images`` vs
``decode_image`` one at a time, 8,192 images a call), then the data source's whole read
(framing + decoding, as a ``logmart_db2luw`` task does before Spark or the raw writer get the
Arrow batches), without and with option ``images``; last, the VALUE COMPRESSION images of
``generate``'s demo capture (1,000 transactions, its images repeated to ``--compressed``),
both ways. Every path runs twice;
the second run is the figure (the first pays imports and caches).

    python benchmarks/bench_db2luw_records.py --records 500000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa

from logmart_generators.db2luw import generate, generate_benchmark
from udfs.db2luw import batch_records, batch_rows, readers
from udfs.db2luw.records import decode_record, iter_log_records
from udfs.db2luw.rows import LayoutBook, TableLayout, read_catalog
from udfs.db2luw.source import Db2LuwReader
from udfs.framing import FrameBatch, db2_read_log_length, db2_resync, frame_file

Decoder = Callable[..., Iterator[pa.RecordBatch]]


def decode_only(batches: list[FrameBatch], decoder: Decoder) -> float:
    started = time.perf_counter()
    for batch in batches:
        for _ in decoder(batch, "bench", "S0000000.log", "filter", "little"):
            pass
    return time.perf_counter() - started


def images_only(images: pa.Array, layout: TableLayout, column_at_a_time: bool) -> float:
    settings, step = batch_rows.DEFAULT_SETTINGS, 8192
    started = time.perf_counter()
    if column_at_a_time:
        for at in range(0, len(images), step):
            batch_rows.decode_images(images.slice(at, step), layout, settings, "little")
    else:
        for image in images.to_pylist():
            batch_rows.decode_image(image, layout, settings, "little")
    return time.perf_counter() - started


def compressed_images(root: Path, transactions: int) -> dict[TableLayout, pa.Array]:
    """The images of ``generate``'s VALUE COMPRESSION tables, by layout (every row of those
    tables is a VALUE COMPRESSION row)."""
    generate(root, transactions, 3)
    (capture,) = sorted((root / "db2luw").iterdir())
    records = [
        decode_record(framed.record, "little")
        for path in sorted(capture.glob("*.log"))
        for framed in iter_log_records(path.read_bytes(), "filter", "little")
    ]
    book = LayoutBook(read_catalog(capture / "catalog"))
    for record in records:
        book.observe(record)
    found: dict[TableLayout, list[bytes]] = {}
    for record in records:
        if not record.get("table_space_identifier"):
            continue
        layout = book.at(record["table_space_identifier"], record["table_identifier"],
                         record["lsn"])  # fmt: skip
        if layout is None or not layout.value_compression:
            continue
        images = [
            record.get("before_image"),
            record.get("after_image"),
            *(record.get("images") or []),
        ]
        found.setdefault(layout, []).extend(image for image in images if image is not None)
    return {layout: pa.array(images, pa.binary()) for layout, images in found.items()}


def data_source_read(root: Path, decoder: Decoder, **options: str) -> tuple[float, int]:
    """The data source's read of every partition with ``decoder`` as ``readers.log_batch``."""
    original, readers.log_batch = readers.log_batch, decoder
    try:
        reader = Db2LuwReader({"path": str(root / "db2luw"), "raw_root": str(root), **options})
        started, rows = time.perf_counter(), 0
        for partition in reader.partitions():
            rows += sum(batch.num_rows for batch in reader.read(partition))
        return time.perf_counter() - started, rows
    finally:
        readers.log_batch = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000, help="inserts to generate")
    parser.add_argument(
        "--compressed",
        type=int,
        default=200_000,
        help="VALUE COMPRESSION images to time (the capture's, repeated)",
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="logmart-bench-db2luw-"))
    path = root / "db2luw" / "bench" / "S0000000.log"
    generate_benchmark(path, args.records, seed=1)
    frames = frame_file(path, db2_read_log_length(), resync=db2_resync())
    batches = [batch for batch in frames if isinstance(batch, FrameBatch)]
    records = sum(len(batch) for batch in batches)
    paths = {
        "column-at-a-time": batch_records.log_batch,
        "per record": readers.log_batch_per_record,
    }
    for name, decoder in paths.items():
        decode_only(batches, decoder)
        seconds = decode_only(batches, decoder)
        rate = records / seconds
        print(f"decode, {name:<17} {records:>9,} records {seconds:6.2f} s {rate:>10,.0f}/s")
    after = [b.column("after_image") for batch in batches for b in batch_records.log_batch(
        batch, "bench", "S0000000.log", "filter", "little")]  # fmt: skip
    images = pa.chunked_array(after).combine_chunks().drop_null()
    (layout,) = read_catalog(path.parent / "catalog").values()
    for name, column_at_a_time in (("column-at-a-time", True), ("per image", False)):
        images_only(images, layout, column_at_a_time)
        seconds = images_only(images, layout, column_at_a_time)
        rate = len(images) / seconds
        print(f"images, {name:<16} {len(images):>9,} images  {seconds:6.2f} s {rate:>10,.0f}/s")
    for name, decoder in paths.items():
        data_source_read(root, decoder)
        seconds, rows = data_source_read(root, decoder)
        print(f"read,   {name:<17} {rows:>9,} rows    {seconds:6.2f} s {rows / seconds:>10,.0f}/s")
    data_source_read(root, batch_records.log_batch, images="true")
    seconds, rows = data_source_read(root, batch_records.log_batch, images="true")
    print(f"read + images (column-at-a-time) {rows:>9,} rows {seconds:6.2f} s "
          f"{rows / seconds:>10,.0f}/s")  # fmt: skip
    compressed = compressed_images(root / "compressed", 1000)
    repeat = -(-args.compressed // sum(len(images) for images in compressed.values()))
    compressed = {
        layout: pa.concat_arrays([images] * repeat) for layout, images in compressed.items()
    }
    count = sum(len(images) for images in compressed.values())
    for name, column_at_a_time in (("column-at-a-time", True), ("per image", False)):
        for _ in range(2):
            started = time.perf_counter()
            for layout, images in compressed.items():
                images_only(images, layout, column_at_a_time)
            seconds = time.perf_counter() - started
        print(f"VALUE COMPRESSION images, {name:<16} {count:>9,} images {seconds:6.2f} s "
              f"{count / seconds:>10,.0f}/s")  # fmt: skip


if __name__ == "__main__":
    main()
