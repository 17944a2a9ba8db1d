"""Peak memory of a whole `logmart build` at several capture sizes (issue: big inputs).

    python benchmarks/bench_build_memory.py --sizes 2000000,6000000 [--workdir DIR]

For each size it generates a Log Master extract of N LLDF records (about 510 bytes each, so
2M records = 1 GB) and runs `logmart build --raw … --warehouse …` in a subprocess, sampling
every 0.5 s the resident memory (RSS) of the driver's Python process, of the Spark JVM (driver
and, in local mode, the executors) and of the Python workers. Memory is flat when the peaks do
not grow with N: no step collects a file or a table into the driver.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from udfs.logmaster.generator import generate_lldf_benchmark


def _rss(pid: int) -> tuple[str, int]:
    with open(f"/proc/{pid}/status") as handle:
        status = dict(line.split(":", 1) for line in handle if ":" in line)
    return status.get("Name", "").strip(), int(status.get("VmRSS", "0 kB").split()[0]) * 1024


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
    """Peak RSS of the driver (the `logmart` process), the JVM and the Python workers."""

    def __init__(self, root: int):
        self.root = root
        self.driver = self.jvm = self.workers = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            jvm = workers = 0
            for pid in _tree(self.root):
                try:
                    name, rss = _rss(pid)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000000,6000000", help="comma-separated record counts")
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="logmart-memory-"))
    logmart = Path(sys.executable).parent / "logmart"
    print(f"workdir {work}")
    print(f"{'records':>10} {'GB':>6} {'seconds':>8} {'driver MB':>10} {'JVM MB':>8} "
          f"{'workers MB':>10} {'exit':>4}")  # fmt: skip
    for size in [int(s) for s in args.sizes.split(",")]:
        raw = work / f"raw-{size}"
        extract = raw / "logmaster" / "bench"
        if not extract.exists():
            generate_lldf_benchmark(extract, size, seed=1)
        gigabytes = sum(p.stat().st_size for p in extract.iterdir()) / 1e9
        warehouse = work / f"warehouse-{size}"
        started = time.perf_counter()
        with open(work / f"build-{size}.log", "w") as log:
            proc = subprocess.Popen(
                [str(logmart), "build", "--raw", str(raw), "--warehouse", str(warehouse)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=work,
            )
            peaks = Peaks(proc.pid)
            code = proc.wait()
            peaks.stop()
        elapsed = time.perf_counter() - started
        print(
            f"{size:>10} {gigabytes:>6.2f} {elapsed:>8.0f} {peaks.driver >> 20:>10} "
            f"{peaks.jvm >> 20:>8} {peaks.workers >> 20:>10} {code:>4}",
            flush=True,
        )


if __name__ == "__main__":
    main()
