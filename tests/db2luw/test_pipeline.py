"""The Db2 LUW pipeline end to end: real Spark, real dbt build, the same marts as every source.

The shared `demo` build (tests/conftest.py) holds the generator's capture (`db2luw/capture01`,
filter framing, little-endian: the default settings). This module adds, before that one build
runs, two captures the default settings do not fit (big-endian; LSN framing), each of whose
files must be quarantined whole with a reason naming the settings it does fit, and the same
log files as capture01 without their catalog export (`no_catalog`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import EXTRA_INPUTS
from udfs.db2luw.generator import generate

pytestmark = pytest.mark.spark

CLEAN = "capture01"
WRONG = {  # capture -> (framing, byteorder) it is written with; read with filter/little
    "wrong_byteorder": ("filter", "big"),
    "wrong_framing": ("lsn", "little"),
}


def write_wrong_settings(raw: Path) -> None:
    """Small captures written with settings the build's defaults do not fit."""
    with tempfile.TemporaryDirectory() as scratch:
        for capture, (framing, byteorder) in WRONG.items():
            out = Path(scratch) / capture
            generate(out, 20, 3, capture=capture, framing=framing, byteorder=byteorder)
            shutil.copytree(out / "db2luw" / capture, raw / "db2luw" / capture)


NO_CATALOG = "no_catalog"


def write_capture_without_catalog(raw: Path) -> None:
    """capture01's log files alone: only tables the log itself describes can be decoded."""
    folder = raw / "db2luw" / NO_CATALOG
    folder.mkdir(parents=True)
    for log in sorted((raw / "db2luw" / CLEAN).glob("*.log")):
        shutil.copy(log, folder / log.name)


EXTRA_INPUTS.extend([write_wrong_settings, write_capture_without_catalog])


def rows(spark, sql: str) -> list[dict]:
    return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


def truth(demo, name: str):
    path = demo.raw / "truth" / "db2luw" / name
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in path.open()]
    return json.loads(path.read_text())


# --- the oracle ----------------------------------------------------------------------------------


def test_replaying_committed_changes_reproduces_the_generated_tables(spark, demo):
    """Apply committed changes in commit order, by key; each before image must be the row
    as it stands (on the columns the row has: a row written before ADD COLUMN lacks it)."""
    tables: dict[str, dict] = {}
    changes = spark.sql(
        "select table_schema, table_name, operation, before_image, after_image, key_columns "
        "from marts.fct_changes "
        f"where source_system = 'db2luw' and capture = '{CLEAN}' and disposition = 'committed' "
        "order by commit_position, change_seq"
    ).toLocalIterator()
    for change in changes:
        table = tables.setdefault(f"{change.table_schema}.{change.table_name}", {})
        if change.operation == "truncate":
            table.clear()
            continue
        if change.before_image is not None:
            key = tuple(change.before_image[k] for k in change.key_columns)
            row = table.pop(key)
            assert {c: change.before_image.get(c) for c in row} == row
        if change.after_image is not None:
            table[tuple(change.after_image[k] for k in change.key_columns)] = change.after_image
    expected = truth(demo, "tables.json")
    for name, table in expected.items():
        want = [{c: row[c] for c in table["columns"]} for row in table["rows"]]
        got = [{c: row.get(c) for c in table["columns"]} for row in tables.get(name, {}).values()]
        assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, want)), name
    assert set(tables) <= set(expected)


def test_every_change_has_the_truths_disposition_and_place(spark, demo):
    changes = rows(
        spark,
        "select table_schema, table_name, operation, disposition, log_position, commit_ts, "
        "authid from marts.fct_changes "
        f"where source_system = 'db2luw' and capture = '{CLEAN}'",
    )
    got = Counter(
        (f"{c['table_schema']}.{c['table_name']}", c["operation"], c["disposition"],
         int(c["log_position"].split(".")[0], 16))
        for c in changes
    )  # fmt: skip
    lines = truth(demo, "changes.jsonl")
    want = Counter((c["table"], c["operation"], c["disposition"], c["lsn"]) for c in lines)
    assert got == want
    assert {k[2] for k in got} == {"committed", "aborted", "savepoint_rollback", "in_flight"}
    committed = {
        (c["authid"], c["commit_ts"].strftime("%Y-%m-%d %H:%M:%S"))
        for c in changes
        if c["disposition"] == "committed"
    }
    assert committed == {
        (c["authid"], c["commit_time"]) for c in lines if c["disposition"] == "committed"
    }


# --- reconciliation and quarantine --------------------------------------------------------------


def test_every_record_is_accounted_for_and_clean_input_quarantines_nothing(spark, demo):
    files = rows(spark, "select * from marts.reconciliation where source_system = 'db2luw'")
    assert files and all(f["is_reconciled"] for f in files)
    logs = [f for f in files if f["capture"] == CLEAN and f["file_kind"] == "log"]
    summary = truth(demo, "summary.json")
    assert sum(f["records_read"] for f in logs) == summary["records"]
    assert {f["file_kind"] for f in files if f["capture"] == CLEAN} == {"log", "catalog"}
    clean = rows(
        spark,
        f"select * from marts.quarantine where source_system = 'db2luw' and capture = '{CLEAN}'",
    )
    assert clean == []


def test_a_capture_the_settings_do_not_fit_is_quarantined_with_the_settings_it_fits(spark, demo):
    quarantined = rows(
        spark,
        "select capture, source_file, raw_offset, stage, reason from marts.quarantine "
        "where source_system = 'db2luw' order by source_file",
    )
    assert {q["capture"] for q in quarantined} == {*WRONG, NO_CATALOG}
    for row in (q for q in quarantined if q["capture"] in WRONG):
        framing, byteorder = WRONG[row["capture"]]
        assert row["stage"] == "decode" and row["raw_offset"] == 0
        assert "does not fit framing='filter' byteorder='little'" in row["reason"]
        assert f"the bytes fit framing='{framing}' byteorder='{byteorder}'" in row["reason"]
    logs = rows(
        spark,
        "select capture, records_read, records_quarantined from marts.reconciliation "
        "where source_system = 'db2luw' and file_kind = 'log' and capture like 'wrong%'",
    )
    assert logs and all(f["records_read"] == f["records_quarantined"] == 1 for f in logs)


# --- transactions and order ---------------------------------------------------------------------


def test_commit_order_and_change_sequence(spark, demo):
    changes = rows(
        spark,
        "select capture, transaction_id, commit_position, change_seq, log_position "
        "from marts.fct_changes "
        "where source_system = 'db2luw' and disposition = 'committed' "
        "order by commit_position, change_seq",
    )
    positions = [c["commit_position"] for c in changes]
    assert positions == sorted(positions) and all(len(p) == 32 for p in positions)
    by_transaction: dict = {}
    for change in changes:
        by_transaction.setdefault((change["capture"], change["transaction_id"]), []).append(change)
    for group in by_transaction.values():
        seqs = [c["change_seq"] for c in group]
        assert seqs == sorted(seqs)
        assert [c["log_position"] for c in group] == sorted(c["log_position"] for c in group)
    assert all(len(tid) == 12 for _, tid in by_transaction)


def test_transactions_mart(spark, demo):
    transactions = rows(
        spark,
        "select disposition, count(*) as n, max(commit_position) as last_commit, "
        "sum(savepoint_rollback_count) as savepoint_rollbacks from marts.fct_transactions "
        f"where source_system = 'db2luw' and capture = '{CLEAN}' group by disposition",
    )
    by_disposition = {t["disposition"]: t for t in transactions}
    assert set(by_disposition) == {"committed", "aborted", "in_flight"}
    assert by_disposition["in_flight"]["last_commit"] is None
    assert by_disposition["aborted"]["last_commit"] is None
    summary = truth(demo, "summary.json")
    assert (
        by_disposition["committed"]["savepoint_rollbacks"]
        == summary["changes"]["savepoint_rollback"]
    )
    assert by_disposition["aborted"]["n"] == summary["transactions"]["aborted"]


# --- what the intermediate models hold ----------------------------------------------------------


def test_layout_versions_follow_add_column_and_initialize_table(spark, demo):
    versions = rows(
        spark,
        "select table_name, version_number, layout_source, column_names, valid_from_lsn "
        f"from intermediate.int_db2luw_table_versions where capture = '{CLEAN}' "
        "order by table_name, version_number",
    )
    by_table: dict = {}
    for version in versions:
        by_table.setdefault(version["table_name"], []).append(version)
    accounts = by_table["ACCOUNTS"]
    assert [len(v["column_names"]) for v in accounts] == [4, 5]
    assert accounts[1]["column_names"][-1] == "TIER" and accounts[1]["valid_from_lsn"] > 0
    assert [v["layout_source"] for v in by_table["EVENTS"]] == ["catalog", "initialize_table"]
    assert [v["layout_source"] for v in by_table["ORDERS"]] == ["catalog"]


def test_catalog_events_and_record_outcomes(spark, demo):
    kinds = {
        r["event_kind"]
        for r in rows(
            spark,
            "select distinct event_kind from intermediate.int_db2luw_catalog_events_extracted",
        )
    }
    assert {"ddl_create_table", "ddl_initialize_table", "ddl_create_index", "ddl_add_columns",
            "ddl_truncate", "ddl_alter_table"} <= kinds  # fmt: skip
    outcomes = {
        r["outcome"]: r["n"]
        for r in rows(
            spark,
            "select outcome, count(*) as n from intermediate.int_db2luw_records_accounted "
            f"where source_file like 'db2luw/{CLEAN}/%' group by outcome",
        )
    }
    summary = truth(demo, "summary.json")
    record_kinds = summary["record_kinds"]
    undo = sum(v for k, v in record_kinds.items() if k.startswith("undo_"))
    assert outcomes["compensation"] == undo
    assert (
        outcomes["not_user_row"] == record_kinds["internal_record"] + record_kinds["catalog_change"]
    )
    assert outcomes["transaction_event"] == sum(
        summary["transactions"][d] for d in ("committed", "aborted")
    )
    assert outcomes["staging_only"] == record_kinds["out_of_row_start"]


def test_decomposed_updates_and_insert_multiple(spark, demo):
    changes = rows(
        spark,
        "select source_change_type, operation, change_id, size(raw_records) as records "
        "from intermediate.int_db2luw_changes_standardized "
        f"where capture = '{CLEAN}' "
        "and source_change_type in ('decomposed_update', 'insert_multiple_records')",
    )
    decomposed = [c for c in changes if c["source_change_type"] == "decomposed_update"]
    summary = truth(demo, "summary.json")
    assert len(decomposed) == summary["record_kinds"]["decomposed_delete"]
    assert all(c["operation"] == "update" and c["records"] == 2 for c in decomposed)
    multiple = [c for c in changes if c["source_change_type"] == "insert_multiple_records"]
    assert len(multiple) == 4 and all(c["change_id"].count(":") == 3 for c in multiple)


def test_without_a_catalog_only_tables_the_log_describes_decode(spark, demo):
    """EVENTS (initialize-table record) and ACCOUNTS (ADD COLUMN's old and new column arrays)
    decode with columns C1..Cn; the other tables' rows are quarantined, saying why."""
    changes = rows(
        spark,
        "select table_schema, table_name, after_image from marts.fct_changes "
        f"where source_system = 'db2luw' and capture = '{NO_CATALOG}' and after_image is not null",
    )
    names = {(c["table_schema"], c["table_name"]) for c in changes}
    assert names == {(None, "TBSPACEID=2,TABLEID=14"), (None, "TBSPACEID=2,TABLEID=12")}
    events = [c for c in changes if c["table_name"].endswith("=14")]
    assert events and all(set(c["after_image"]) == {"C1", "C2", "C3", "C4"} for c in events)
    quarantined = rows(
        spark,
        "select stage, reason from marts.quarantine "
        f"where source_system = 'db2luw' and capture = '{NO_CATALOG}'",
    )
    assert quarantined and {q["stage"] for q in quarantined} == {"row_image"}
    assert all(q["reason"].startswith("no table layout for TBSPACEID=") for q in quarantined)
    expected = rows(
        spark,
        "select count(distinct source_file, raw_offset) as n "
        "from intermediate.int_db2luw_row_images_decoded "
        f"where capture = '{CLEAN}' and table_identifier not in (12, 14)",
    )
    assert len(quarantined) == expected[0]["n"]
    files = rows(
        spark,
        "select is_reconciled, records_quarantined from marts.reconciliation "
        f"where capture = '{NO_CATALOG}' and source_system = 'db2luw'",
    )
    assert files and all(f["is_reconciled"] for f in files)
