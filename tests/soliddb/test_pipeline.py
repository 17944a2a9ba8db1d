"""The solidDB pipeline end to end: real Spark, real dbt build, the same marts as every source.

The shared `demo` build (tests/conftest.py) holds the generator's capture as Parquet
(`soliddb/capture01`); this module adds the same capture as CSV and as JSON lines, and a small
damaged CSV capture laid out by hand, before that one build runs.
"""

from __future__ import annotations

import csv
import json
import shutil
import struct
import tempfile
from pathlib import Path

import pytest

from logmart_generators.soliddb import generate
from tests.conftest import DEMO_SEED, DEMO_TRANSACTIONS, EXTRA_INPUTS
from tests.replay import as_multiset
from udfs.soliddb.layouts import DdlLogRecId

from .handmade import field, logaddr

pytestmark = pytest.mark.spark

CLEAN_CAPTURES = ("capture01", "capture01_csv", "capture01_jsonl")
DAMAGED = "damaged"
SYS_LOG_HEADER = ["RECID", "RECNAME", "TRXID", "STMTTRXID", "RELID", "FLAGS", "LOGADDR", "DATA"]


# --- inputs ----------------------------------------------------------------------------------


def write_other_formats(raw: Path) -> None:
    """The demo's solidDB capture again, as CSV and as JSON lines (same seed, same rows)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        generate(out, DEMO_TRANSACTIONS, DEMO_SEED, formats=("csv", "jsonl"))
        truth = out / "truth" / "soliddb" / "tables.json"
        assert truth.read_bytes() == (raw / "truth" / "soliddb" / "tables.json").read_bytes()
        for fmt in ("csv", "jsonl"):
            shutil.copytree(
                out / "soliddb" / f"capture01_{fmt}", raw / "soliddb" / f"capture01_{fmt}"
            )


def bad_row(recid, trxid, n, relid=None, data=None, logaddr_text=None, flags=1) -> list:
    """A SYS_LOG CSV row: ``data`` bytes are written as hex, text as it is (bad hex)."""
    data_text = data.hex().upper() if isinstance(data, bytes) else data
    address = logaddr_text if logaddr_text is not None else logaddr(n, 9).hex().upper()
    return [recid, "", trxid, n, relid, flags, address, data_text or ""]


def image(key: int, value: str) -> bytes:
    return field(struct.pack(">i", key)) + field(value.encode())


def write_damaged_capture(raw: Path) -> None:
    """A small CSV capture with one bad row of each kind among good ones."""
    capture = raw / "soliddb" / DAMAGED
    (capture / "catalog").mkdir(parents=True)
    (capture / "catalog" / "SYS_TABLES.csv").write_text("ID,TABLE_NAME,SCHEMA\n2001,T,BAD\n")
    (capture / "catalog" / "SYS_COLUMNS.csv").write_text(
        "REL_ID,COLUMN_NAME,COLUMN_NUMBER,DATA_TYPE,NULLABLE\n"
        "2001,ID,1,INTEGER,NO\n2001,V,2,VARCHAR,YES\nnot-a-number,W,3,INTEGER,YES\n"
    )
    rows = [
        bad_row(7, 900, 0x10, flags=0),  # 0 TRX_START
        bad_row(1, 900, 0x20, 2001, image(1, "good")),  # 1 a good insert
        bad_row(1, 900, 0x30, 2001, "0G"),  # 2 DATA is not hex
        bad_row(1, 900, 0x40, 2001, image(2, "x"), logaddr_text="00FF"),  # 3 LOGADDR 2 bytes
        bad_row(1, 900, 0x50, 9999, image(3, "x")),  # 4 no layout for the table
        bad_row(99, 900, 0x60, 2001, image(4, "x")),  # 5 RECID unknown
        bad_row(1, 900, 0x70, 2001, image(5, "x") + field(b"extra")),  # 6 one field too many
        bad_row(6, 900, 0x80, None, field(b"ALTER TABLE BAD.NOPE ADD COLUMN X INTEGER")),  # 7
        bad_row(12, 900, 0x90, flags=0),  # 8 COMMIT
        bad_row(7, 901, 0xA0, flags=0),  # 9 TRX_START, never committed
        bad_row(1, 901, 0xB0, 2001, image(6, "open")),  # 10
    ]
    with (capture / "sys_log.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(SYS_LOG_HEADER)
        writer.writerows(rows)
        handle.write("1,,900,1,2001\n")  # 11: too few cells


EXTRA_INPUTS.extend([write_other_formats, write_damaged_capture])


# --- helpers ---------------------------------------------------------------------------------


def rows(spark, sql: str) -> list[dict]:
    return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


def truth(raw: Path, name: str):
    path = raw / "truth" / "soliddb" / name
    text = path.read_text("utf-8")
    return (
        [json.loads(line) for line in text.splitlines()]
        if name.endswith(".jsonl")
        else json.loads(text)
    )


def same_row(a: dict, b: dict) -> bool:
    """Rows equal column by column, a column missing on one side counting as NULL."""
    return all(a.get(name) == b.get(name) for name in set(a) | set(b))


def version_at(versions: list[dict], schema: str, name: str, position: str) -> dict:
    """The table version named schema.name in force at LOGADDR ``position``."""
    (found,) = [
        v
        for v in versions
        if (v["table_schema"], v["table_name"]) == (schema, name)
        and v["valid_from_logaddr"] < position
        and (v["valid_to_logaddr"] is None or position <= v["valid_to_logaddr"])
    ]
    return found


def replay_capture(spark, capture: str) -> dict[str, list[dict]]:
    """Committed changes of one capture from marts.fct_changes, applied in commit order to
    empty tables keyed by RELID (a rename keeps the table), named by their last version."""
    versions = rows(
        spark,
        "select rel_id, table_schema, table_name, valid_from_logaddr, valid_to_logaddr, "
        "is_dropped, column_names from intermediate.int_soliddb_table_versions "
        f"where capture = '{capture}' and version_error is null",
    )
    changes = spark.sql(
        "select table_schema, table_name, operation, before_image, after_image, log_position "
        "from marts.fct_changes "
        f"where source_system = 'soliddb' and capture = '{capture}' "
        "and disposition = 'committed' order by commit_position, change_seq"
    ).toLocalIterator()
    tables: dict[int, list[dict]] = {}
    for change in changes:
        rel_id = version_at(versions, change.table_schema, change.table_name, change.log_position)[
            "rel_id"
        ]
        table = tables.setdefault(rel_id, [])
        if change.operation == "truncate":
            table.clear()
            continue
        if change.operation in ("update", "delete"):
            before = dict(change.before_image)
            index = next(i for i, row in enumerate(table) if same_row(row, before))
            del table[index]
        if change.operation in ("insert", "update"):
            table.append(dict(change.after_image))
    final = {}
    for rel_id, table in tables.items():
        last = max(
            (v for v in versions if v["rel_id"] == rel_id), key=lambda v: v["valid_from_logaddr"]
        )
        if not last["is_dropped"]:
            columns = last["column_names"]
            final[f"{last['table_schema']}.{last['table_name']}"] = [
                {c: row.get(c) for c in columns} for row in table
            ]
    return final


# --- tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize("capture", CLEAN_CAPTURES)
def test_replaying_committed_changes_reproduces_the_generated_tables(spark, demo, capture):
    expected = {name: table["rows"] for name, table in truth(demo.raw, "tables.json").items()}
    replayed = replay_capture(spark, capture)
    assert set(replayed) == set(expected)
    for name, table_rows in expected.items():
        assert as_multiset(replayed[name]) == as_multiset(table_rows), name


def test_changes_and_dispositions_match_the_truth(spark, demo):
    keys = ("transaction_id", "disposition", "commit_position", "change_seq", "operation")
    keys += ("table_schema", "table_name", "before_image", "after_image")
    expected = sorted(
        json.dumps({k: c[k] for k in keys}, sort_keys=True)
        for c in truth(demo.raw, "changes.jsonl")
    )
    for capture in CLEAN_CAPTURES:
        got = rows(
            spark,
            f"select {', '.join(keys)} from marts.fct_changes "
            f"where source_system = 'soliddb' and capture = '{capture}'",
        )
        assert sorted(json.dumps(c, sort_keys=True) for c in got) == expected, capture
    dispositions = {
        r["transaction_id"]: r["transaction_disposition"]
        for r in rows(
            spark,
            "select distinct transaction_id, transaction_disposition "
            "from intermediate.int_soliddb_records_grouped where capture = 'capture01'",
        )
    }
    assert dispositions == {
        t["transaction_id"]: t["disposition"] for t in truth(demo.raw, "transactions.jsonl")
    }
    assert {"committed", "aborted", "in_flight"} <= set(dispositions.values())
    assert any("#" in transaction_id for transaction_id in dispositions)


def test_clean_captures_reconcile_and_quarantine_nothing(spark, demo):
    files = rows(
        spark,
        "select * from marts.reconciliation where source_system = 'soliddb' order by source_file",
    )
    assert files and all(f["is_reconciled"] for f in files)
    clean = [f for f in files if f["capture"] in CLEAN_CAPTURES]
    assert len(clean) == 9  # an export and two catalog files per capture
    assert all(f["records_read"] == f["records_decoded"] > 0 for f in clean)
    summary = truth(demo.raw, "summary.json")
    exports = [f for f in clean if f["file_kind"] in ("parquet", "csv", "jsonl")]
    assert [f["records_read"] for f in exports] == [summary["rows"]] * 3
    captures = "', '".join(CLEAN_CAPTURES)
    assert rows(spark, f"select * from marts.quarantine where capture in ('{captures}')") == []


def test_capture_off_transactions_are_kept_but_not_propagated(spark, demo):
    capture_off = {
        t["transaction_id"] for t in truth(demo.raw, "transactions.jsonl") if t["capture_off"]
    }
    assert capture_off
    ids = "', '".join(capture_off)
    kept = rows(
        spark,
        "select count(*) as n from intermediate.int_soliddb_changes_paired "
        f"where capture = 'capture01' and transaction_id in ('{ids}') "
        "and is_capture_off_transaction",
    )
    assert kept[0]["n"] > 0
    propagated = rows(
        spark,
        "select count(*) as n from marts.fct_changes where source_system = 'soliddb' "
        f"and capture = 'capture01' and transaction_id in ('{ids}')",
    )
    assert propagated[0]["n"] == 0
    outcomes = rows(
        spark,
        "select outcome, count(*) as n from intermediate.int_soliddb_records_accounted "
        "where source_file = 'soliddb/capture01/sys_log.parquet' group by outcome",
    )
    assert {"capture_off_change", "row_change", "transaction_event", "nop", "catalog_event"} == {
        o["outcome"] for o in outcomes
    }


def test_in_flight_and_aborted_transactions(spark, demo):
    transactions = rows(
        spark,
        "select transaction_id, disposition, commit_position from marts.fct_transactions "
        "where source_system = 'soliddb' and capture = 'capture01'",
    )
    by_disposition: dict[str, list] = {}
    for t in transactions:
        by_disposition.setdefault(t["disposition"], []).append(t)
    assert set(by_disposition) == {"committed", "aborted", "in_flight"}
    assert all(t["commit_position"] is None for t in by_disposition["in_flight"])
    assert all(len(t["commit_position"]) == 40 for t in by_disposition["committed"])


def test_ddl_mid_stream_changes_the_layout_of_later_rows(spark, demo):
    inventory = rows(
        spark,
        "select valid_from_logaddr, column_names, key_columns, column_types from "
        "intermediate.int_soliddb_table_versions where capture = 'capture01' "
        "and table_name = 'Inventory' and version_error is null order by valid_from_logaddr",
    )
    created, altered = inventory
    assert created["column_names"] == ["Sku", "QTY", "PRICE"] and created["key_columns"] == ["Sku"]
    assert altered["column_names"] == ["Sku", "QTY", "PRICE", "UPDATED_AT"]
    assert altered["column_types"] == {
        "Sku": "VARCHAR(20)",
        "QTY": "INTEGER",
        "PRICE": "NUMERIC(8,2)",
        "UPDATED_AT": "TIMESTAMP",
    }
    changes = rows(
        spark,
        "select log_position, after_image, decode_warnings from marts.fct_changes "
        "where capture = 'capture01' and table_name = 'Inventory' and after_image is not null",
    )
    before = [c for c in changes if c["log_position"] < altered["valid_from_logaddr"]]
    after = [c for c in changes if c["log_position"] > altered["valid_from_logaddr"]]
    assert before and after
    assert all(set(c["after_image"]) == {"Sku", "QTY", "PRICE"} for c in before)
    assert all("UPDATED_AT" in c["after_image"] for c in after)
    warnings = [w for c in after for w in c["decode_warnings"]]
    assert any("UPDATED_AT is not in the" in w for w in warnings)


def test_every_ddl_record_is_a_catalog_event(spark, demo):
    events = rows(
        spark,
        "select log_position, ddl_logrecid, ddl_info, relid, table_schema, table_name, "
        "event_kind from intermediate.int_soliddb_catalog_events_extracted "
        "where capture = 'capture01' and record_kind = 'ddl' order by log_position",
    )
    expected = sorted(truth(demo.raw, "schema_changes.jsonl"), key=lambda e: e["logaddr"])
    assert [(e["log_position"], e["ddl_logrecid"], e["ddl_info"], e["relid"]) for e in events] == [
        (e["logaddr"], e["logrecid"], e["info"], e["relid"]) for e in expected
    ]
    assert [
        (e["table_schema"], e["table_name"]) for e in events if e["event_kind"].endswith("_table")
    ] == [
        (e["table_schema"], e["table_name"]) for e in expected if e["logrecid"] in _TABLE_LOGRECIDS
    ]
    assert {e["ddl_logrecid"] for e in events} == {d.value for d in DdlLogRecId}


_TABLE_LOGRECIDS = {d.value for d in DdlLogRecId if d.name.endswith("_TABLE")}


def test_bad_rows_are_quarantined_with_their_reason(spark, demo):
    quarantined = {
        (r["source_file"], r["raw_offset"]): (r["stage"], r["reason"])
        for r in rows(spark, f"select * from marts.quarantine where capture = '{DAMAGED}'")
    }
    sys_log = f"soliddb/{DAMAGED}/sys_log.csv"
    assert quarantined.pop((sys_log, 2)) == ("decode", "DATA is not hex: '0G'")
    assert quarantined.pop((sys_log, 3)) == ("decode", "LOGADDR is 2 bytes, expected 20")
    stage, reason = quarantined.pop((sys_log, 4))
    assert stage == "row_image" and reason.startswith("no table layout for RELID 9999 at LOGADDR")
    stage, reason = quarantined.pop((sys_log, 5))
    assert stage == "record_kind" and reason.startswith("RECID 99 is not a SYS_LOG record id")
    stage, reason = quarantined.pop((sys_log, 6))
    assert (stage, reason.split(" (")[0]) == (
        "row_image",
        "DATA holds 3 fields but the table layout has 2 columns",
    )
    stage, reason = quarantined.pop((sys_log, 7))
    assert stage == "statement" and "table BAD.NOPE is not known" in reason
    assert quarantined.pop((sys_log, 11)) == ("decode", "the row has 5 cells, the header 8")
    stage, reason = quarantined.pop((f"soliddb/{DAMAGED}/catalog/SYS_COLUMNS.csv", 2))
    assert stage == "decode" and "REL_ID 'not-a-number' is not a whole number" in reason
    assert quarantined == {}
    changes = rows(
        spark,
        "select raw_offset, disposition from marts.fct_changes "
        f"where capture = '{DAMAGED}' order by raw_offset",
    )
    assert changes == [
        {"raw_offset": 1, "disposition": "committed"},
        {"raw_offset": 10, "disposition": "in_flight"},
    ]
    (damaged,) = rows(spark, f"select * from marts.reconciliation where source_file = '{sys_log}'")
    assert (damaged["records_read"], damaged["records_quarantined"]) == (12, 7)
    assert damaged["is_reconciled"]


def test_record_bytes_are_the_rows_as_read(spark, demo):
    csv_lines = (
        (demo.raw / "soliddb" / "capture01_csv" / "sys_log.csv").read_bytes().splitlines(True)
    )
    read = rows(
        spark,
        "select raw_offset, record_bytes, record_length, logaddr_hex from "
        "staging.stg_soliddb__sys_log where capture = 'capture01_csv' order by raw_offset",
    )
    assert [bytes(r["record_bytes"]) for r in read] == csv_lines[1:]
    assert all(r["record_length"] == len(r["record_bytes"]) for r in read)
    parquet = rows(
        spark,
        "select record_bytes, logaddr_hex, recid from staging.stg_soliddb__sys_log "
        "where capture = 'capture01' and logaddr_hex is not null",
    )
    for row in parquet:
        as_json = json.loads(bytes(row["record_bytes"]))
        assert (as_json["LOGADDR"], as_json["RECID"]) == (row["logaddr_hex"], row["recid"])


def test_soliddb_changes_have_the_contract_columns_and_types(spark, demo):
    def columns(table: str) -> list[tuple[str, str]]:
        schema = spark.table(f"intermediate.{table}").schema
        return [(f.name, f.dataType.simpleString()) for f in schema.fields]

    def required(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [column for column in found if column[0] not in OPTIONAL_CONTRACT_COLUMNS]

    soliddb = columns("int_soliddb_changes_standardized")
    logmaster = columns("int_logmaster_changes_standardized")
    contract = [column for column in logmaster if column[0] not in LOGMASTER_SETTLEMENT_COLUMNS]
    assert required(soliddb) == required(contract)
    assert ("column_types", "map<string,string>") in soliddb


# Columns a source's changes may leave out: fct_changes gives column_types null and derives
# log_stream from the capture (Log Master carries it, having settled URs over the stream);
# the partition-level truncate's columns (Log Master DM of one partition; 'table' otherwise)
# and the reasons of values not in the log are optional columns of fct_changes too, and so is
# what made a change Db2 made itself (generated_by: Log Master SQLSRCTYPE) and Log Master's
# word on a transaction's completeness (INCOMPLETETRANS, INCOMPLETEDEP, UORHASCOMP).
OPTIONAL_CONTRACT_COLUMNS = {
    "column_types", "log_stream", "truncate_scope", "partition_number", "partition_key_columns",
    "partition_low_key", "partition_high_key", "before_unavailable", "after_unavailable",
    "generated_by", "incomplete_transaction", "incomplete_dependency", "has_compensation",
}  # fmt: skip
# Log Master's settlement is incremental by capture: its table keeps the UR fields it settles
# by, and the partition's capture fingerprint, beside the contract's columns (fct_changes
# does not take them).
LOGMASTER_SETTLEMENT_COLUMNS = {
    "logrecdisp", "uordisp", "uorcommitlrsn", "uortimestamp", "uorcommittimestamp",
    "capture_fingerprint",
}  # fmt: skip
