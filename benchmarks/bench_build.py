"""The whole `logmart build`, as a user waits for it: scratch, unchanged re-run, one new capture.

    python benchmarks/bench_build.py [--sizes 100000,1000000] [--big] [--mix] [--workdir DIR]

For each size N it writes a Log Master extract of N LLDF records (about 490 bytes each; with
`--mix` a workload of N records in total, a third from each source) as the first capture of a
log stream, and runs `logmart build` in a subprocess three times on one warehouse:

  scratch      an empty warehouse;
  again        the same raw folder, unchanged (nothing to decode, nothing to rebuild);
  incremental  after a second capture of the same stream (100,000 records) was added.

Each line: wall seconds of the whole command (JVM start and exit included), of its phases
(session start + exit, raw load, dbt, the typed views made after dbt, and dbt by layer from
run_results.json: the span from a layer's first node's start to its last node's end), records
per second end to end and per core, the ratio of the whole build to its raw load measured in
the same run, the CPU the command's processes used (core-seconds) and how much of it went to
the JVM's JIT compiler threads, and peak RSS of the driver's Python process, the JVM (driver
and, in local mode, the executors) and the Python workers (all sampled every 0.5 s from /proc:
CPU of a process or thread that ends between two samples is missed, so both are lower bounds).
`--big` adds N = 4,000,000.

The builds run with the driver JVM's class archive (udfs/class_archive.py), made first in the
foreground when it is missing, as a user's builds have it after their first session: otherwise
the first build would start its maker in the background, beside the next phase.
`--no-class-archive` measures without it (LOGMART_CLASS_ARCHIVE=off).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from logmart_generators.logmaster import generate_lldf_benchmark

INCREMENT = 100_000
LAYERS = ("seeds", "staging", "intermediate", "marts", "tests")


def _rss(pid: int) -> tuple[str, int]:
    with open(f"/proc/{pid}/status") as handle:
        status = dict(line.split(":", 1) for line in handle if ":" in line)
    return status.get("Name", "").strip(), int(status.get("VmRSS", "0 kB").split()[0]) * 1024


def _ticks(stat_path: str) -> tuple[str, int]:
    """The name in a /proc stat file and the user + system CPU ticks it counts."""
    with open(stat_path) as handle:
        text = handle.read()
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return name, int(fields[11]) + int(fields[12])


# The JVM's JIT threads, as /proc names them (15 characters): "C1 CompilerThre", "C2 Compiler…"
JIT_THREADS = ("C1 Compiler", "C2 Compiler")
TICKS = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


class Peaks:
    """Peak RSS of the driver (the `logmart` process), the JVM and the Python workers; CPU
    core-seconds of them all (`cpu`) and of the JVM's JIT compiler threads (`jit`)."""

    def __init__(self, root: int):
        self.root = root
        self.driver = self.jvm = self.workers = 0
        self._cpu: dict[int, int] = {}  # pid -> ticks, as last seen
        self._jit: dict[int, int] = {}  # thread id -> ticks, as last seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu(self) -> float:
        return sum(self._cpu.values()) / TICKS

    @property
    def jit(self) -> float:
        return sum(self._jit.values()) / TICKS

    def _sample_cpu(self, pid: int, is_jvm: bool) -> None:
        self._cpu[pid] = _ticks(f"/proc/{pid}/stat")[1]
        if not is_jvm:
            return
        for thread in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError):
                name, ticks = _ticks(f"/proc/{pid}/task/{thread}/stat")
                if name.startswith(JIT_THREADS):
                    self._jit[int(thread)] = ticks

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            jvm = workers = 0
            for pid in _tree(self.root):
                try:
                    name, rss = _rss(pid)
                    self._sample_cpu(pid, "java" in name)
                except (OSError, ValueError):
                    continue
                if pid == self.root:
                    self.driver = max(self.driver, rss)
                elif "java" in name:
                    jvm += rss
                else:
                    workers += rss
            self.jvm = max(self.jvm, jvm)
            self.workers = max(self.workers, workers)


def write_capture(raw: Path, capture: str, records: int, first: int, mix: bool) -> int:
    """One capture of the `bench` log stream of records ``first``.. (Log Master only, or a
    third of them from each source); returns how many log records it holds."""
    if not mix:
        generate_lldf_benchmark(raw / "logmaster" / "bench" / capture, records, seed=1,
                                first=first)  # fmt: skip
        return records
    from logmart_generators.db2luw import generate_benchmark as db2luw_benchmark
    from logmart_generators.soliddb import generate_benchmark as soliddb_benchmark

    third = records // 3
    generate_lldf_benchmark(raw / "logmaster" / "bench" / capture, third, seed=1, first=first)
    # Db2 LUW and solidDB benchmark logs start their ids at 0: one capture a stream of its own
    luw = db2luw_benchmark(raw / "db2luw" / f"bench{capture}" / "S0000000.log", third, seed=1)
    solid = soliddb_benchmark(raw / "soliddb" / f"bench{capture}" / "sys_log.parquet",
                              records - 2 * third, seed=1)  # fmt: skip
    return third + luw["records"] + solid["records"]


def ensure_class_archive() -> str:
    """Make the class archive in the foreground when it is missing; what was done."""
    from udfs.class_archive import make_in_foreground

    started = time.perf_counter()
    path = make_in_foreground()
    if path is None:
        return "class archive: off or not possible with this java"
    return f"class archive: {path} ({time.perf_counter() - started:.1f} s to find or make)"


def run_build(raw: Path, warehouse: Path, log: Path) -> dict:
    """`logmart build` in a subprocess: wall seconds, exit code, peaks, last_build.json."""
    logmart = Path(sys.executable).parent / "logmart"
    started = time.perf_counter()
    with open(log, "a") as out:
        proc = subprocess.Popen(
            [str(logmart), "build", "--raw", str(raw), "--warehouse", str(warehouse)],
            stdout=out, stderr=subprocess.STDOUT, cwd=warehouse.parent,
        )  # fmt: skip
        peaks = Peaks(proc.pid)
        code = proc.wait()
        peaks.stop()
    wall = time.perf_counter() - started
    record_file = warehouse / "dbt" / "last_build.json"
    record = json.loads(record_file.read_text()) if record_file.exists() else {}
    return {"wall": wall, "exit": code, "peaks": peaks, "record": record,
            "mtime": record_file.stat().st_mtime if record_file.exists() else None}  # fmt: skip


HEADER = (
    f"{'records':>9} {'phase':<11} {'wall s':>7} {'session':>7} {'raw s':>6} {'dbt s':>6} "
    f"{'typed':>5} "
    + " ".join(f"{layer[:5]:>5}" for layer in LAYERS)
    + f" {'rec/s':>8} {'/core':>7} {'x raw':>6} {'cpu s':>6} {'jit s':>6} {'drv MB':>6} "
    f"{'JVM MB':>6} {'wrk MB':>6} exit"
)


def line(records: int, phase: str, result: dict, fresh: bool) -> str:
    """One row of the table; dbt columns are '-' when dbt did not run (marts current)."""
    record = result["record"] if fresh else {}
    raw_s = record.get("raw_load_s")
    dbt_s = record.get("dbt_s")
    layers = record.get("dbt_layers", {})
    phases = ("raw_load_s", "dbt_s", "typed_s", "summary_s")
    session = result["wall"] - sum(record.get(k, 0) for k in phases)
    rate = records / result["wall"]
    cores = os.cpu_count() or 1

    def cell(value: float | None, width: int, digits: int = 0) -> str:
        return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"

    peaks = result["peaks"]
    return (
        f"{records:>9} {phase:<11} {result['wall']:>7.1f} {cell(session if fresh else None, 7, 1)} "
        f"{cell(raw_s, 6, 1)} {cell(dbt_s, 6, 1)} {cell(record.get('typed_s'), 5, 1)} "
        + " ".join(cell(layers.get(layer, {}).get("span_s"), 5) for layer in LAYERS)
        + f" {rate:>8.0f} {rate / cores:>7.0f} "
        f"{cell(result['wall'] / raw_s if raw_s else None, 6, 1)} {peaks.cpu:>6.0f} "
        f"{peaks.jit:>6.0f} {peaks.driver >> 20:>6} "
        f"{peaks.jvm >> 20:>6} {peaks.workers >> 20:>6} {result['exit']:>4}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated record counts")
    parser.add_argument("--big", action="store_true", help="add 4,000,000 records")
    parser.add_argument("--mix", action="store_true", help="a third from each of the 3 sources")
    parser.add_argument("--phases", default="scratch,again,incremental")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--no-class-archive", action="store_true",
                        help="builds without the driver JVM's class archive")  # fmt: skip
    args = parser.parse_args()
    if args.no_class_archive:
        os.environ["LOGMART_CLASS_ARCHIVE"] = "off"  # the builds' subprocesses inherit it
    print(ensure_class_archive(), flush=True)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="logmart-build-bench-"))
    sizes = [int(s) for s in args.sizes.split(",")] + ([4_000_000] if args.big else [])
    phases = args.phases.split(",")
    print(f"workdir {work}; {os.cpu_count()} cores; workload "
          f"{'3 sources' if args.mix else 'Log Master'}")  # fmt: skip
    print(HEADER, flush=True)
    for size in sizes:
        case = work / f"{'mix' if args.mix else 'lm'}-{size}"
        raw, warehouse, log = case / "raw", case / "warehouse", case / "build.log"
        if not raw.exists():
            write_capture(raw, "c1", size, 0, args.mix)
        if "scratch" in phases:
            result = run_build(raw, warehouse, log)
            print(line(size, "scratch", result, True), flush=True)
        if "again" in phases:
            record = warehouse / "dbt" / "last_build.json"
            before = record.stat().st_mtime if record.exists() else None
            result = run_build(raw, warehouse, log)
            print(line(size, "again", result, result["mtime"] != before), flush=True)
        if "incremental" in phases:
            added = write_capture(raw, "c2", INCREMENT, size, args.mix)
            result = run_build(raw, warehouse, log)
            print(line(added, "incremental", result, True), flush=True)


if __name__ == "__main__":
    main()
