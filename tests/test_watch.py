"""`logmart build --watch SECONDS`: one process, a build whenever the raw folder changed and
then held still (udfs/watch.py)."""

from __future__ import annotations

import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from tests.conftest import run_logmart
from udfs.cli import build_parser, main
from udfs.watch import raw_fingerprint, watch


def _touch(path: Path, data: bytes, mtime_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_the_fingerprint_sees_a_new_file_a_longer_one_and_a_newer_one(tmp_path: Path) -> None:
    _touch(tmp_path / "logmaster" / "DB2P" / "c1" / "A.F0001", b"x" * 10, 1_000)
    first = raw_fingerprint(tmp_path)
    assert first == ((os.path.join("logmaster", "DB2P", "c1", "A.F0001"), 10, 1_000),)
    assert raw_fingerprint(tmp_path) == first  # looking changes nothing
    _touch(tmp_path / "logmaster" / "DB2P" / "c1" / "A.F0001", b"x" * 11, 1_000)
    longer = raw_fingerprint(tmp_path)
    _touch(tmp_path / "logmaster" / "DB2P" / "c1" / "A.F0001", b"x" * 11, 2_000)
    newer = raw_fingerprint(tmp_path)
    _touch(tmp_path / "soliddb" / "PROD" / "c2" / "sys_log.parquet", b"p", 3_000)
    added = raw_fingerprint(tmp_path)
    assert len({first, longer, newer, added}) == 4
    assert [entry[0] for entry in added] == [
        os.path.join("logmaster", "DB2P", "c1", "A.F0001"),
        os.path.join("soliddb", "PROD", "c2", "sys_log.parquet"),
    ]


def test_a_capture_is_built_once_it_holds_still_not_while_it_is_copied(tmp_path: Path) -> None:
    """The folder as each build saw it: the first at once; the second only after the new file
    stopped growing for one look; with `builds=2` the loop then ends."""
    capture = tmp_path / "logmaster" / "DB2P" / "c2" / "B.F0001"
    _touch(tmp_path / "logmaster" / "DB2P" / "c1" / "A.F0001", b"a", 1_000)
    seen: list[tuple] = []
    # what happens to the folder during each interval the loop sleeps
    during = [
        lambda: None,  # nothing new: no build
        lambda: _touch(capture, b"b" * 5, 2_000),  # a capture starts to arrive
        lambda: _touch(capture, b"b" * 9, 3_000),  # still being copied: no build yet
        lambda: None,  # held still for one interval: build
    ]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        during[len(sleeps) - 1]()

    made = watch(tmp_path, 0.5, lambda: seen.append(raw_fingerprint(tmp_path)),
                 builds=2, sleep=sleep)  # fmt: skip
    assert made == 2 and sleeps == [0.5] * 4
    assert [len(folder) for folder in seen] == [1, 2]
    assert seen[1][1] == (os.path.join("logmaster", "DB2P", "c2", "B.F0001"), 9, 3_000)


def test_watch_needs_positive_seconds_and_its_count_needs_watch(tmp_path: Path, capsys) -> None:
    for bad in ("0", "-1", "soon"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["build", "--raw", "r", "--watch", bad])
    _touch(tmp_path / "raw" / "soliddb" / "PROD" / "c1" / "sys_log.parquet", b"p", 1_000)
    code = main(["build", "--raw", str(tmp_path / "raw"), "--warehouse",
                 str(tmp_path / "warehouse"), "--watch-builds", "2"])  # fmt: skip
    assert code == 2
    assert "--watch-builds counts the builds of --watch" in capsys.readouterr().err


def test_a_watching_build_builds_a_new_capture_when_it_arrives(
    own_warehouse: None, tmp_path: Path
) -> None:
    """`logmart build --watch` on the test run's JVM (`run_logmart`): the first capture of a
    solidDB log stream is built; the second, copied in while the command watches, is built by
    the same process (only its files decoded); `--watch-builds 2` ends the command."""
    from logmart_generators.soliddb import generate

    stage, raw, warehouse = tmp_path / "stage", tmp_path / "raw", tmp_path / "warehouse"
    generate(stage, 40, 5, capture="PROD/c1", split="PROD/c2")
    shutil.copytree(stage / "soliddb" / "PROD" / "c1", raw / "soliddb" / "PROD" / "c1")
    first_built = warehouse / "dbt" / "last_build.json"
    arrived = threading.Event()

    def second_capture_arrives() -> None:  # once the first build is recorded
        for _ in range(6000):
            if first_built.exists():
                # copied beside the raw folder, then moved in whole (one rename): the watch
                # cannot see it half-copied however slow the copy is here
                shutil.copytree(stage / "soliddb" / "PROD" / "c2", tmp_path / "incoming")
                (tmp_path / "incoming").rename(raw / "soliddb" / "PROD" / "c2")
                arrived.set()
                return
            threading.Event().wait(0.1)

    copier = threading.Thread(target=second_capture_arrives, daemon=True)
    copier.start()
    done = run_logmart(["build", "--raw", str(raw), "--warehouse", str(warehouse),
                        "--checks", "none", "--watch", "0.5", "--watch-builds", "2"])  # fmt: skip
    copier.join(timeout=5)
    assert done.returncode == 0, done.stderr[-3000:]
    assert arrived.is_set()
    assert f"watching {raw} every 0.5 s" in done.stderr
    assert len(re.findall(rf"built {re.escape(str(warehouse))} in \d+ s", done.stderr)) == 2
    files = re.findall(r"files: (\d+) decoded, (\d+) unchanged", done.stdout)
    c1_files, c2_files = (sum(path.is_file() for path in (raw / "soliddb" / "PROD" / c).rglob("*"))
                          for c in ("c1", "c2"))  # fmt: skip
    assert files == [(str(c1_files), "0"), (str(c2_files), str(c1_files))], done.stdout
