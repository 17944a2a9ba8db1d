"""Base snapshots added to a built log stream, a phase of the incremental scenario
(tests/incremental/scenario.py: ``snapshot_phase``), whose warehouse and metastore are its own;
tests/marts/test_snapshots_build.py checks what it records.

The scenario's solidDB, Db2 LUW and Log Master streams (PROD, SAMPLE and DB2P, each cut into
two captures) are built. Then, per source, a table's rows as of a commit position in the
middle of its changes (replayed from marts.fct_changes) become a base snapshot (solidDB: CSV
with the position; Db2 LUW: typed Parquet with the commit time; Log Master: CSV with the
RBA/LRSN position), and a table truncated later (found among the log's tables: a table renamed
after its truncate is no table of the generator's final ones) gets a snapshot taken before the
truncate holding one row the log never shows. Bad snapshots (a column the table lacks, an
unknown table, no side file) go in too. The folder is built again (incremental: only the
snapshots are new) and once more unchanged. The phase records what each build did, the
tables' current and as-of rows against the generator's final tables, the row history's
versions, the truncate's UNDO and the quarantine; the scenario's build from scratch that
follows runs every dbt data test with the snapshots in, and records those of the models built
on the snapshot tables (``snapshot_model_tests``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from tests.replay import as_multiset, truth_tables, with_columns

# the log stream of each source (a snapshot goes in <folder>/<stream>/snapshots)
STREAMS = {"soliddb": "PROD", "db2luw": "SAMPLE", "db2zos": "DB2P"}
FOLDERS = {"soliddb": "soliddb", "db2luw": "db2luw", "db2zos": "logmaster"}
# the models whose dbt data tests snapshots can move: the snapshot tables and every model
# built on them
SNAPSHOT_MODELS = ("stg_logmart__snapshots", "stg_logmart__snapshot_rows")
ONLY_SNAPSHOT_KEY = "31999"  # a key value no generator writes (fits a SMALLINT)


def _rows(spark: SparkSession, sql: str) -> list[dict[str, Any]]:
    return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


def _last_column_types(spark: SparkSession, where: str) -> dict[str, str]:
    """The SQL type per column of the table's last change that carries them (fct_changes)."""
    row = spark.sql(
        f"select column_types from marts.fct_changes where {where} and column_types is not null "
        "order by commit_position desc, change_seq desc limit 1"
    ).first()
    return dict(row[0]) if row else {}


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def table_changes(spark: SparkSession, system: str, table: str) -> list[dict[str, Any]]:
    schema, name = table.split(".", 1)
    return _rows(
        spark,
        "select change_id, operation, truncate_scope, before_image, after_image, key_columns, "
        "column_types, commit_position, commit_ts from marts.fct_changes "
        f"where source_system = '{system}' and disposition = 'committed' "
        f"and table_schema = {_literal(schema)} and table_name = {_literal(name)} "
        "order by commit_position, transaction_id, change_seq",
    )


def replay_until(changes: list[dict[str, Any]], position: str) -> list[dict]:
    """The table's rows after its changes committed at or before ``position`` (rows matched
    by their whole before image, as tests/replay.py does); ValueError when a change meets a
    row the log never showed."""
    rows: list[dict] = []
    for change in changes:
        if change["commit_position"] > position:
            break
        before, after = change["before_image"], change["after_image"]
        if change["operation"] == "truncate":
            rows.clear()
        elif change["operation"] == "insert":
            rows.append(dict(after))
        else:
            index = next(
                (i for i, row in enumerate(rows)
                 if with_columns(row, before) == with_columns(before, row)),
                None,
            )  # fmt: skip
            if index is None:
                raise ValueError(f"{before} is not in the table")
            if change["operation"] == "delete":
                del rows[index]
            else:
                rows[index] = dict(after)
    return rows


def stream_position_at(spark: SparkSession, system: str, ts: dt.datetime) -> str:
    """The position of the stream's last commit at or before ``ts``."""
    return spark.sql(
        "select max(commit_position) from marts.fct_transactions "
        f"where source_system = '{system}' and disposition = 'committed' "
        f"and commit_ts <= timestamp '{ts.isoformat(sep=' ')}'"
    ).first()[0]


def choose_tables(truth_root: Path, spark: SparkSession, system: str) -> dict[str, Any]:
    """The table to snapshot in the middle of its log (most changes, some of them updates or
    deletes after the middle, no truncate, nothing the log lacks) and a table truncated by
    the log (snapshot just before the truncate)."""
    from tests.marts.oracle import replayable_tables

    truth = json.loads((truth_root / "truth" / system / "tables.json").read_text())
    replayable = set(replayable_tables(truth_root, system))
    truncated_in_log = [
        r["name"]
        for r in _rows(
            spark,
            "select distinct concat(table_schema, '.', table_name) as name from marts.fct_changes "
            f"where source_system = '{system}' and operation = 'truncate' and "
            "truncate_scope = 'table'",
        )
    ]
    middle, truncated = None, None
    for table in sorted({*truth, *truncated_in_log}):
        changes = table_changes(spark, system, table)
        operations = [c["operation"] for c in changes]
        cuts = [c for c in changes if c["operation"] == "truncate"]
        if cuts and truncated is None and cuts[0]["truncate_scope"] == "table":
            try:
                replay_until(changes, cuts[0]["commit_position"])
            except ValueError:
                continue
            truncated = (table, changes)
            continue
        if cuts or table not in replayable or not truth[table]["rows"]:
            continue
        if any(truth[table].get("unavailable") or []):
            continue
        late = operations[len(operations) // 2 + 1 :]
        if ("update" in late or "delete" in late) and (
            middle is None or len(changes) > len(middle[1])
        ):
            try:  # every change meets a row the log showed before
                replay_until(changes, changes[-1]["commit_position"])
            except ValueError:
                continue
            middle = (table, changes)
    return {"middle": middle, "truncated": truncated, "replayable": sorted(replayable)}


def middle_position(
    spark: SparkSession, system: str, changes: list[dict[str, Any]]
) -> tuple[str, str | None]:
    """A position in the middle of ``changes`` and, when the stream logs commit times, the
    time that maps to it (the snapshot then gives the time)."""
    change = changes[len(changes) // 2]
    ts = change["commit_ts"]
    if ts is None:
        return change["commit_position"], None
    return stream_position_at(spark, system, ts), ts.isoformat(sep=" ")


def layout_at(changes: list[dict[str, Any]], position: str) -> dict[str, str]:
    """The column types of the table's last change at or before ``position`` (its first
    change's when none): the columns the table had then."""
    before = [c for c in changes if c["commit_position"] <= position] or changes[:1]
    return dict(before[-1]["column_types"] or {})


def _columns(rows: list[dict], column_types: dict[str, str]) -> list[str]:
    seen = list(column_types or {})
    for row in rows:
        seen += [c for c in row if c not in seen]
    return seen


def write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["\\N" if row.get(c) is None else row[c] for c in columns])


def _arrow_column(values: list[str | None], sql_type: str | None) -> Any:
    """The values typed as a Db2 unload would type them (text when the type is not one of
    these, or a value does not parse)."""
    import pyarrow as pa

    kind = (sql_type or "").upper()
    converters = [
        (r"(SMALLINT|INTEGER|BIGINT)", pa.int64(), int),
        (r"DOUBLE", pa.float64(), float),
        (r"DATE", pa.date32(), dt.date.fromisoformat),
        (r"TIMESTAMP(\(\d+\))?", pa.timestamp("us"), dt.datetime.fromisoformat),
        (r"(VAR)?BINARY(\(\d+\))?", pa.binary(), bytes.fromhex),
    ]
    decimal = re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", kind)
    if decimal:
        converters.insert(0, (r"DECIMAL.*", pa.decimal128(*map(int, decimal.groups())), Decimal))
    for pattern, arrow_type, parse in converters:
        if re.fullmatch(pattern, kind):
            try:
                return pa.array([None if v is None else parse(v) for v in values], arrow_type)
            except (ValueError, TypeError, ArithmeticError, pa.ArrowException):
                break
    return pa.array(values, pa.string())


def write_parquet(path: Path, rows: list[dict], columns: list[str], types: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {c: _arrow_column([row.get(c) for row in rows], types.get(c)) for c in columns}
    pq.write_table(pa.table(arrays), path)


def add_snapshots(raw: Path, truth_root: Path, spark: SparkSession, system: str) -> dict[str, Any]:
    """Write the source's snapshots into the raw folder; what they hold (for the checks)."""
    chosen = choose_tables(truth_root, spark, system)
    folder = raw / FOLDERS[system] / STREAMS[system] / "snapshots"
    folder.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {}
    for role in ("middle", "truncated"):
        if chosen[role] is None:
            continue
        table, changes = chosen[role]
        schema, name = table.split(".", 1)
        keys = list(changes[-1]["key_columns"] or [])
        taken_at = None
        if role == "middle":
            position, taken_at = middle_position(spark, system, changes)
            rows = replay_until(changes, position)
            types = layout_at(changes, position)
        else:
            cut = next(c for c in changes if c["operation"] == "truncate")
            position = spark.sql(
                "select max(commit_position) from marts.fct_transactions "
                f"where source_system = '{system}' and disposition = 'committed' "
                f"and commit_position < '{cut['commit_position']}'"
            ).first()[0]
            rows = replay_until(changes, position)
            types = layout_at(changes, position)
            extra = dict.fromkeys(types)
            extra.update(dict.fromkeys(keys, ONLY_SNAPSHOT_KEY))
            rows.append(extra)
            record["truncate_change_id"] = cut["change_id"]
        columns = _columns(rows, types)
        stem = f"{name}_{role}"
        side = {"schema": schema, "table": name}
        if system != "db2luw":
            write_csv(folder / f"{stem}.csv", rows, columns)
            side["csv_null"] = "\\N"
        else:
            write_parquet(folder / f"{stem}.parquet", rows, columns, types)
        if taken_at and system == "db2luw":
            side["taken_at"] = taken_at
            text = "\n".join(f"{k}: {json.dumps(v)}" for k, v in side.items()) + "\n"
            (folder / f"{stem}.yaml").write_text(text)
        else:
            side["position"] = position
            (folder / f"{stem}.json").write_text(json.dumps(side))
        record[role] = {"table": table, "position": position, "taken_at": taken_at,
                        "rows": len(rows), "keys": keys, "file": f"{stem}",
                        "replayable": table in chosen["replayable"]}  # fmt: skip
    if system == "soliddb":
        table = chosen["middle"][0]
        schema, name = table.split(".", 1)
        (folder / "BAD_COLUMN.csv").write_text("NOT_A_COLUMN\n1\n")
        side = {"schema": schema, "table": name, "position": record["middle"]["position"]}
        (folder / "BAD_COLUMN.json").write_text(json.dumps(side))
        (folder / "NO_SUCH_TABLE.csv").write_text("ID\n1\n")
        (folder / "NO_SUCH_TABLE.json").write_text('{"table": "NO_SUCH", "position": "00"}')
        (folder / "NO_SIDE.csv").write_text("ID\n1\n")
    return record


def table_results(
    spark: SparkSession, truth_root: Path, system: str, record: dict[str, Any]
) -> dict[str, Any]:
    """Current and as-of rows of the snapshotted tables against the generator's final ones,
    their versions, and the truncate's UNDO."""
    from tests.marts.oracle import column_name, duckdb_type, truth_rows
    from udfs.asof import as_of

    truth = truth_tables(truth_root, system)
    declared = json.loads((truth_root / "truth" / system / "tables.json").read_text())
    last = spark.sql(
        f"select max(commit_position) from marts.fct_changes where source_system = '{system}'"
    ).first()[0]
    out: dict[str, Any] = {}
    for role in ("middle", "truncated"):
        if role not in record:
            continue
        table = record[role]["table"]
        schema, name = table.split(".", 1)
        where = (f"source_system = '{system}' and table_schema = {_literal(schema)} "
                 f"and table_name = {_literal(name)}")  # fmt: skip
        versions = _rows(
            spark,
            "select version_id, opened_by, ended_by, valid_from_position, valid_to_position, "
            f"is_current, row_image from marts.fct_row_history where {where}",
        )
        current = [dict(v["row_image"]) for v in versions if v["is_current"]]
        columns, as_of_rows = as_of(spark, table, last, system) if table in truth else ([], [])
        as_of_dicts = [dict(zip(columns, row, strict=True)) for row in as_of_rows]
        # (a table renamed after its truncate is none of the generator's final tables)
        expected = truth.get(table, [])
        every = {c for row in [*current, *expected] for c in row}
        # `logmart asof` gives typed values (Decimal, date, datetime, bytes): compared with the
        # truth's text per column type, as tests/incremental compares them
        sql_types = _last_column_types(spark, where)
        duck_types = {
            column_name(c): duckdb_type(c, sql_types.get(column_name(c)))
            for c in declared.get(table, {}).get("columns", [])
        }
        out[role] = {
            "table": table,
            "in_truth": table in truth,
            "current_equals_truth": as_multiset(current, every) == as_multiset(expected, every),
            "as_of_equals_truth": set(columns) <= set(duck_types)
            and truth_rows(as_of_dicts, duck_types) == truth_rows(expected, duck_types),
            "as_of": sorted(json.dumps(r, sort_keys=True, default=str) for r in as_of_dicts),
            "current": sorted(json.dumps(r, sort_keys=True) for r in current),
            "truth": sorted(json.dumps(r, sort_keys=True) for r in expected),
            "opened_by": sorted({str(v["opened_by"]) for v in versions}),
            "before_log_versions": sum(v["version_id"].startswith("before-log:") for v in versions),
            "snapshot_versions": sum(v["opened_by"] == "snapshot" for v in versions),
            "snapshot_versions_ended_by": sorted(
                {str(v["ended_by"]) for v in versions if v["opened_by"] == "snapshot"}
            ),
            "first_change_version_from": min(
                (
                    v["valid_from_position"]
                    for v in versions
                    if v["opened_by"] not in ("snapshot", None)
                ),
                default=None,
            ),
        }
        if role == "truncated":
            undo = spark.sql(
                "select undo_sql from marts.fct_change_sql "
                f"where change_id = {_literal(record['truncate_change_id'])}"
            ).first()
            out[role]["truncate_undo"] = undo[0] if undo else None
    return out


def snapshot_phase(
    spark: SparkSession, raw: Path, truth_root: Path, run: Callable[[str], None]
) -> dict[str, Any]:
    """Add every source's snapshots to the built raw folder (``truth_root``: where the
    generators wrote their truth), build it (``run("snapshots")``: a user's build with a
    user's checks) and again (``run("snapshots_again")``); what they hold and what the marts
    made of them. ``run(label)`` builds the folder and records the build."""
    result: dict[str, Any] = {
        "snapshots": {system: add_snapshots(raw, truth_root, spark, system) for system in STREAMS}
    }
    run("snapshots")
    run("snapshots_again")
    result["tables"] = {
        system: table_results(spark, truth_root, system, result["snapshots"][system])
        for system in STREAMS
    }
    result["resolved"] = _rows(
        spark,
        "select source_file, table_schema, table_name, given_position, taken_at, "
        "snapshot_position, snapshot_status, problem, row_count "
        "from intermediate.int_logmart_snapshots_resolved order by source_file",
    )
    result["quarantine"] = _rows(
        spark,
        "select source_system, source_file, stage, reason, what_to_do from marts.quarantine "
        "where stage = 'snapshot' order by source_file",
    )
    result["reconciliation_problems"] = _rows(
        spark,
        "select source_file, file_kind, problem from marts.reconciliation "
        "where file_kind like 'snapshot%' and problem is not null",
    )
    return result


def snapshot_model_tests(warehouse: Path) -> dict[str, str]:
    """The dbt data tests of the snapshot models and of every model built on them, with their
    status in the last dbt run of ``warehouse`` (absent: not run)."""
    target = warehouse / "dbt" / "target"
    manifest = json.loads((target / "manifest.json").read_text())
    children = manifest["child_map"]
    models = {
        node
        for node in manifest["nodes"]
        if node.startswith("model.") and node.rsplit(".", 1)[1] in SNAPSHOT_MODELS
    }
    seen, todo = set(models), list(models)
    while todo:  # the models downstream (`<model>+`)
        for child in children.get(todo.pop(), []):
            if child.startswith("model.") and child not in seen:
                seen.add(child)
                todo.append(child)
    tests = {node for model in seen for node in children.get(model, []) if node.startswith("test.")}
    ran = json.loads((target / "run_results.json").read_text())["results"]
    status = {r["unique_id"]: r["status"] for r in ran}
    return {test: status.get(test, "not run") for test in sorted(tests)}
