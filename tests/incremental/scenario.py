"""The incremental-build scenario, on a warehouse and metastore of its own: ``main(WORKDIR)``
(fixture ``stream_scenario`` in tests/conftest.py runs it on the test run's JVM) writes
``WORKDIR/result.json``.

Each source's generator writes one workload cut into two captures of one log stream, with
transactions open at the cut. The raw folder first holds capture 1 (build ``first``); then
capture 2 and copies of capture-1 files arrive (build ``second``, incremental); the same
folder is built again (``again``); base snapshots are added to every stream and it is built
twice more (``snapshots``, ``snapshots_again``: tests/marts/snapshot_scenario.py); then it is
built from scratch (``scratch``: every file decoded again, every model rebuilt, every dbt test
run, logmart's unit tests too; the others skip dbt's tests for time, but for the snapshots
build, which runs a user's checks). ``main``'s ``more_inputs`` adds other log streams to the
folder before ``scratch``: the test run's demo (tests/conftest.py ``demo``), whose build is
then this one. After each build the result records what the loader did, the Parquet files
behind the raw tables and the incremental models, and every mart's rows (of ``first``, its
transactions only; of ``snapshots_again``, none), of the scenario's streams only.
tests/incremental/test_incremental.py and tests/marts/test_snapshots_build.py check it.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

# Stream-nested captures: RAW/<source>/<stream>/<capture>.
LOGMASTER = ("DB2P/LOGM.EXTRACT1", "DB2P/LOGM.EXTRACT2")
DB2LUW = ("SAMPLE/c1", "SAMPLE/c2")
SOLIDDB = ("PROD/c1", "PROD/c2")
CAPTURES = {"db2zos": LOGMASTER, "db2luw": DB2LUW, "soliddb": SOLIDDB}
TRANSACTIONS = 40
SEED = 11

# Copies that arrive with capture 2: (copy, original), paths under the raw root. The first
# sorts before its original (same extract): it becomes the file decoded, the original the copy.
_EXTRACTS = "logmaster/DB2P/LOGM.EXTRACT"
COPIES = [
    (f"{_EXTRACTS}1/A.COPY.F0002", f"{_EXTRACTS}1/LOGM.EXTRACT1.F0002"),
    (f"{_EXTRACTS}2/LOGM.EXTRACT2.F0009", f"{_EXTRACTS}1/LOGM.EXTRACT1.F0003"),
    ("db2luw/SAMPLE/c2/S0000099.log", "db2luw/SAMPLE/c1/S0000000.log"),
    ("soliddb/PROD/c2/sys_log_copy.parquet", "soliddb/PROD/c1/sys_log.parquet"),
]
INCREMENTAL_MODELS = [
    # Log Master's images are decoded in the settlement's own query (the images' model is
    # ephemeral): the settlement is the table by capture
    "int_logmaster_changes_standardized",
    "int_db2luw_row_images_decoded",
    "int_soliddb_row_images_decoded",
]
BUILD_TIME_COLUMNS = {"loaded_at"}
# A build's record keeps the scenario's log streams only: its build from scratch has other
# streams too (``main``'s ``more_inputs``: the test run's demo, tests/conftest.py).
STREAMS = tuple(sorted(captures[0].split("/")[0] for captures in CAPTURES.values()))
_STREAM_LIST = ", ".join(f"'{stream}'" for stream in STREAMS)
# The marts kept of a build (all of them when not named here): the tests compare the others'
# marts, of the first's only its transactions (the transactions open at the cut), and of the
# unchanged build after the snapshots' only whether dbt ran.
MARTS_KEPT = {"first": ("fct_transactions",), "snapshots_again": ()}
# dbt's data and unit tests run once, on the build from scratch (~4/5 of a build's nodes).
NO_TESTS = ("--exclude-resource-type", "test", "--exclude-resource-type", "unit_test")


def generate(stage: Path) -> dict[str, Any]:
    """Every source's split workload under ``stage``; their summaries."""
    from logmart_generators.db2luw import generate as db2luw
    from logmart_generators.logmaster import generate as logmaster
    from logmart_generators.soliddb import generate as soliddb

    return {
        "db2zos": logmaster(stage, TRANSACTIONS, SEED, capture=LOGMASTER[0], split=LOGMASTER[1]),
        "db2luw": db2luw(stage, TRANSACTIONS, SEED, capture=DB2LUW[0], split=DB2LUW[1]),
        "soliddb": soliddb(stage, TRANSACTIONS, SEED, capture=SOLIDDB[0], split=SOLIDDB[1]),
    }


def copy_captures(stage: Path, raw: Path, part: int) -> None:
    for folder, captures in (("logmaster", LOGMASTER), ("db2luw", DB2LUW), ("soliddb", SOLIDDB)):
        shutil.copytree(stage / folder / captures[part], raw / folder / captures[part])


def _rows(spark: SparkSession, sql: str) -> list[dict[str, Any]]:
    return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


def in_scenario_streams(columns: list[str]) -> str:
    """The condition that keeps a table's rows of the scenario's log streams, by the first of
    its columns that names the stream."""
    if "log_stream" in columns:
        return f"log_stream in ({_STREAM_LIST})"
    if "capture" in columns:
        return f"split(capture, '/')[0] in ({_STREAM_LIST})"
    if "source_file" in columns:  # <source folder>/<stream>/...
        return f"split(source_file, '/')[1] in ({_STREAM_LIST})"
    raise ValueError(f"no column names a row's log stream among {columns}")


def _parts(spark: SparkSession, table: str, keys: list[str]) -> dict[Any, list[str]]:
    """The Parquet files holding the rows of ``table`` of the scenario's streams, by the
    value(s) of ``keys``."""
    found: dict[Any, set[str]] = {}
    columns = ", ".join(keys)
    sql = (
        f"select distinct {columns}, input_file_name() as part from {table} "
        f"where {in_scenario_streams(keys)}"
    )
    for row in spark.sql(sql).collect():
        key = row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)
        found.setdefault(key, set()).add(row["part"])
    return {key: sorted(files) for key, files in found.items()}


# The recording's queries are small: each spends its time in the driver (planning, scheduling,
# collecting), about one core. Three at a time keep both cores busy: a whole build's record in
# 3.8-4.5 s instead of 5.3-6.3 s, warm (docs/performance.md, "2026-11-29, night").
PARALLEL_QUERIES = 3


def in_parallel(work: dict[Any, Callable[[], Any]]) -> dict[Any, Any]:
    """Each of ``work``'s functions called, up to PARALLEL_QUERIES at a time (Spark runs the
    jobs of several threads side by side); their results by the same keys."""
    with ThreadPoolExecutor(PARALLEL_QUERIES) as pool:
        started = {key: pool.submit(function) for key, function in work.items()}
        return {key: future.result() for key, future in started.items()}


def _mart_rows(spark: SparkSession, name: str) -> list[str]:
    """A mart's rows of the scenario's streams, each as JSON text without the build's time,
    sorted."""
    frame = spark.table(f"marts.{name}")
    keep = [c for c in frame.columns if c not in BUILD_TIME_COLUMNS]
    frame = frame.where(in_scenario_streams(frame.columns))
    return sorted(
        r[0] for r in frame.selectExpr(f"to_json(struct({', '.join(f'`{c}`' for c in keep)}))")
        .collect()
    )  # fmt: skip


def _files_of(spark: SparkSession, table: str) -> list[str]:
    sql = f"select distinct input_file_name() as part from {table}"
    return sorted(r.part for r in spark.sql(sql).collect())


def snapshot(
    spark: SparkSession, load: dict[str, Any], seconds: float, only: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """What one build left: load report, raw.files, the files behind each raw table's and
    incremental model's rows, and the rows of the marts named in `only`, else of every mart (JSON
    text, sorted); of the scenario's log streams only."""
    work: dict[Any, Callable[[], Any]] = {
        "files": lambda: _rows(spark, "select * except (loaded_at), cast(loaded_at as string) "
                               "as loaded_at from raw.files "
                               f"where {in_scenario_streams(['log_stream'])}"),
    }  # fmt: skip
    for table in spark.catalog.listTables("raw"):
        # the session's temporary views (dbt's __dbt_tmp of an incremental run) list here too
        if table.name in ("files", "captures") or table.isTemporary:
            continue
        work[("raw", table.name)] = partial(_parts, spark, f"raw.{table.name}", ["source_file"])
    for model in INCREMENTAL_MODELS:
        keys = ["capture", "capture_fingerprint"]
        work[("models", model)] = partial(_parts, spark, f"intermediate.{model}", keys)
    for table in spark.catalog.listTables("marts"):
        if table.isTemporary:  # views are marts too (fct_changes is one): compared as well
            continue
        if only is not None and table.name not in only:
            continue
        work[("marts", table.name)] = partial(_mart_rows, spark, table.name)
    # the Parquet files of the listing tables: a build of an unchanged folder writes none
    for name in ("files", "captures"):
        work[("listing", name)] = partial(_files_of, spark, f"raw.{name}")
    found = in_parallel(work)
    record: dict[str, Any] = {"load": load, "seconds": round(seconds, 1), "files": found["files"],
                              "raw": {}, "listing": {}, "models": {}, "marts": {}}  # fmt: skip
    for key, value in found.items():
        if key != "files":
            record[key[0]][key[1]] = value
    record["models"] = {
        model: {
            capture: {"fingerprint": fingerprint, "parts": files}
            for (capture, fingerprint), files in parts.items()
        }
        for model, parts in record["models"].items()
    }
    return record


def stream_tools(spark: SparkSession, generated: dict[str, Any]) -> dict[str, Any]:
    """What a user gets from `logmart sql` and `logmart asof` over each source's two-capture
    stream: the REDO statements of the whole stream in commit order (per transaction), the
    UNDO and REDO scripts of each committed transaction the cut splits, and each table as of
    the stream's last commit. The sources side by side (`in_parallel`)."""
    return in_parallel(
        {system: partial(_stream_tools_of, spark, generated, system) for system in CAPTURES}
    )


def _stream_tools_of(spark: SparkSession, generated: dict[str, Any], system: str) -> dict:
    import io

    from udfs.asof import as_of
    from udfs.change_sql import Selection, write_script
    from udfs.cli import to_jsonable

    stream = CAPTURES[system][0].split("/")[0]
    where = f"source_system = '{system}' and log_stream = '{stream}'"
    redo = _rows(spark, "select transaction_id, commit_position, "
                        "concat(table_schema, '.', table_name) as table_name, "
                        f"redo_sql from marts.fct_change_sql where {where} "
                        "order by commit_position, transaction_id, change_seq")  # fmt: skip
    types = {}
    for row in _rows(spark, "select concat(table_schema, '.', table_name) as name, "
                            f"column_types from marts.fct_changes where {where} "
                            "and column_types is not null "
                            "order by commit_position, change_seq"):  # fmt: skip
        types[row["name"]] = row["column_types"]
    scripts, without_rows = {}, {}
    for truth_id, truth in generated[system]["split"]["open_transactions"].items():
        if truth["disposition"] != "committed" or not truth["changes"]:
            continue  # (a transaction of DDL only has no UNDO/REDO statements)
        sql = (
            "select distinct transaction_id from marts.fct_changes "
            f"where {where} and upper(transaction_id) = upper('{truth_id}')"
        )
        found_ids = _rows(spark, sql)
        if not found_ids:  # its changes are DDL / catalog records only: no statements
            without_rows[truth_id] = _rows(
                spark,
                "select change_count, schema_change_count from marts.fct_transactions "
                f"where {where} and upper(transaction_id) = upper('{truth_id}')",
            )
            continue
        (txn,) = found_ids
        scripts[truth_id] = {"transaction_id": txn["transaction_id"]}
        for direction in ("undo", "redo"):
            out = io.StringIO()
            # no --source/--stream: a transaction id alone finds its one stream
            write_script(spark, direction, Selection(transaction=txn["transaction_id"]), out)
            scripts[truth_id][direction] = out.getvalue()
    last = max(r["commit_position"] for r in redo)
    tables = sorted({r["table_name"] for r in redo})
    asof = {}
    for table in tables:
        columns, rows = as_of(spark, table, last, system, stream)
        # typed values (Decimal, datetime, bytes) as `logmart asof --format json` prints them
        asof[table] = [
            dict(zip(columns, (to_jsonable(v) for v in row), strict=True)) for row in rows
        ]
    return {"stream": stream, "redo": redo, "types": types, "scripts": scripts,
            "without_rows": without_rows, "last_position": last, "asof": asof}  # fmt: skip


# `logmart export debezium` of every log stream (issue 15 item 3): into one folder after the
# builds "first", "second" and "again" (each run exports what is new), and the whole stream at
# once after "second" into another; result["debezium"] has what each run wrote and the files.
DEBEZIUM_RUNS = ("first", "second", "again")


def _debezium_files(folder: Path) -> dict[str, list[str]]:
    """Every file of an export folder, as its lines (the checkpoint as one line)."""
    return {path.name: path.read_text("utf-8").splitlines() for path in sorted(folder.iterdir())}


def debezium_exports(spark: SparkSession, work: Path, label: str, result: dict) -> None:
    from udfs.debezium import export

    if label not in DEBEZIUM_RUNS:
        return
    record = result.setdefault("debezium", {"written": {}, "files": {}})
    runs = work / "debezium-runs"
    record["written"][label] = {w.path.name: w.events for w in export(spark, runs)}
    record["files"][label] = _debezium_files(runs)
    if label == "second":
        export(spark, work / "debezium-once")
        record["once"] = _debezium_files(work / "debezium-once")


def main(work: Path, more_inputs: Callable[[Path], None] | None = None) -> None:
    from tests.marts.snapshot_scenario import snapshot_model_tests, snapshot_phase
    from udfs.pipeline import build
    from udfs.session import spark_session
    from udfs.strict import first_problem

    stage, raw, warehouse = work / "stage", work / "raw", work / "warehouse"
    result: dict[str, Any] = {"generated": generate(stage), "builds": {}, "summaries": {},
                              "stage": str(stage), "raw": str(raw)}  # fmt: skip
    copy_captures(stage, raw, 0)
    with spark_session(warehouse, app_name="logmart-incremental") as spark:

        def run(
            label: str, full_refresh: bool = False, dbt_args: tuple = (), checks: str = "data"
        ) -> None:
            started = time.monotonic()
            summary = build(spark, raw, warehouse, full_refresh=full_refresh, dbt_args=dbt_args,
                            checks=checks)  # fmt: skip
            seconds = time.monotonic() - started
            only = MARTS_KEPT.get(label)
            result["builds"][label] = {**snapshot(spark, summary["load"], seconds, only),
                                       "dbt": summary["dbt"],
                                       "strict": first_problem(spark)}  # fmt: skip
            debezium_exports(spark, work, label, result)
            result["summaries"][label] = summary

        run("first", dbt_args=NO_TESTS)
        copy_captures(stage, raw, 1)
        for copy, original in COPIES:
            shutil.copyfile(raw / original, raw / copy)
        run("second", dbt_args=NO_TESTS)
        run("again", dbt_args=NO_TESTS)
        result["streams"] = stream_tools(spark, result["generated"])
        result["snapshots"] = snapshot_phase(spark, raw, stage, run)
        if more_inputs is not None:  # other log streams, built from scratch with the scenario's
            more_inputs(raw)
        # every dbt test runs here: logmart's unit tests and the tests of its SQL's invariants
        run("scratch", full_refresh=True, checks="all")
        result["snapshots"]["dbt_tests"] = snapshot_model_tests(warehouse)
    (work / "result.json").write_text(json.dumps(result, sort_keys=True, default=str))
