"""The raw load with fixed 64 MB ranges against ranges balanced over the cores
(udfs.raw_writer.balanced_split_bytes), side by side in one Spark session on local[2]:
a 1M-record Log Master extract (two data files, 254 + 231 MB) with row images, and a
1M-record Db2 LUW capture (one 156 MB file), three rounds in turn.

    python benchmarks/bench_split_balance.py
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from logmart_generators.db2luw import generate_benchmark
from logmart_generators.logmaster import generate_lldf_benchmark
from udfs.db2luw.source import Db2LuwDataSource
from udfs.logmaster.source import LogMasterDataSource
from udfs.raw_writer import write_raw_table
from udfs.session import spark_session


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="logmart-bench-split-"))
    try:
        _run(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(work: Path) -> None:
    raw = work / "raw"
    generate_lldf_benchmark(raw / "logmaster" / "LOGM.BENCH", 1_000_000)
    generate_benchmark(raw / "db2luw" / "bench" / "S0000000.log", 1_000_000, seed=1)
    for f in sorted(raw.rglob("*")):
        if f.is_file() and f.stat().st_size > 1e6:
            print(f, f.stat().st_size >> 20, "MB")
    with spark_session(work / "wh", master="local[2]", app_name="splitcmp") as spark:
        from udfs.pipeline import register_udfs

        register_udfs(spark)
        cases = {
            "lm full 64MB": (
                LogMasterDataSource,
                "logmaster",
                {"records": "data", "images": "true", "split_bytes": str(64 << 20)},
            ),
            "lm full balanced": (
                LogMasterDataSource,
                "logmaster",
                {"records": "data", "images": "true"},
            ),
            "luw rec 64MB": (
                Db2LuwDataSource,
                "db2luw",
                {"records": "log", "split_bytes": str(64 << 20)},
            ),
            "luw rec balanced": (Db2LuwDataSource, "db2luw", {"records": "log"}),
        }
        for rnd in range(3):
            for name, (ds, folder, opts) in cases.items():
                o = {"path": str(raw / folder), "raw_root": str(raw), **opts}
                t = time.monotonic()
                n = write_raw_table(spark, ds, o, "default.t_" + name.replace(" ", "_"))
                s = time.monotonic() - t
                print(f"round {rnd} {name:20s} {n} rows {s:6.2f} s {n / s:10,.0f}/s", flush=True)


if __name__ == "__main__":
    main()
