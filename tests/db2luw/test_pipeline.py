"""The Db2 LUW pipeline end to end: real Spark, real dbt build, the same marts as every source.

The shared `demo` build (tests/conftest.py) holds the generator's capture (`db2luw/capture01`,
filter framing, little-endian: the default settings). This module adds, before that one build
runs, two captures the default settings do not fit (big-endian; LSN framing), each of whose
files must be quarantined whole with a reason naming the settings it does fit, the same
log files as capture01 without their catalog export (`no_catalog`), and a capture laid by hand
from the spec's offsets (`handmade`: updates whose after image is in the insert before them).
"""

from __future__ import annotations

import json
import shutil
import struct
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from logmart_generators.db2luw import generate
from tests.conftest import EXTRA_INPUTS
from tests.db2luw import handmade as h
from tests.db2luw.replay import dropped_name, truth_dropped

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


HANDMADE = "handmade"
TID_LOAD, TID_PAIRED, TID_ALONE = (bytes.fromhex(f"00000000a00{n}") for n in range(3))


def _id_name(key: int, name: bytes, outer: int = 0) -> bytes:
    """Table S.T (2, 7): ID SMALLINT NOT NULL at 0, NAME VARCHAR(10) at 2, null byte at 6."""
    return h.formatted("<", struct.pack("<hHH", key, 7, len(name)) + b"\x00", name, outer)


def write_handmade_capture(raw: Path) -> None:
    """Records at the spec offsets, each after its 56-byte db2ReadLogFilterData: two rows
    inserted and committed; an update whose after image is in the insert record before it
    (insert image record type 0x04, update new half 0x02), committed; then such an update
    without that insert, committed."""
    folder = raw / "db2luw" / HANDMADE
    (folder / "catalog").mkdir(parents=True)
    (folder / "catalog" / "tables.csv").write_text("TABSCHEMA,TABNAME,TBSPACEID,TABLEID\nS,T,2,7\n")
    (folder / "catalog" / "columns.csv").write_text(
        "TABSCHEMA,TABNAME,COLNAME,COLNO,TYPENAME,LENGTH,SCALE,NULLS,KEYSEQ\n"
        "S,T,ID,0,SMALLINT,2,0,N,1\nS,T,NAME,1,VARCHAR,10,0,Y,\n"
    )
    carrier_rid = b"\x09\0\0\0\0\x04"
    commit = struct.pack("<QH", 1_709_280_000, 4) + b"USER"
    records = [
        (TID_LOAD, 0x4E, h.insert_body("<", 162, _id_name(7, b"before"), table=7)),
        (TID_LOAD, 0x4E, h.insert_body("<", 162, _id_name(8, b"old"), table=7)),
        (TID_LOAD, 0x84, commit),
        (TID_PAIRED, 0x4E, h.insert_body("<", 162, _id_name(7, b"after", 0x04), rid=carrier_rid,
                                         table=7)),
        (TID_PAIRED, 0x4E, h.update_body("<", _id_name(7, b"before"),
                                         h.image("<", carrier_rid, 0x02), table=7)),
        (TID_PAIRED, 0x84, commit),
        (TID_ALONE, 0x4E, h.update_body("<", _id_name(8, b"old"), h.image("<", carrier_rid, 0x02),
                                        table=7)),
        (TID_ALONE, 0x84, commit),
    ]  # fmt: skip
    out = bytearray()
    for lsn, (tid, rtype, body) in enumerate(records, 5000):
        record = h.record("<", body, rtype=rtype, lsn=lsn, tid=tid)
        out += struct.pack("<QQQQQQIi", 1, 77, lsn, 2, 0, 0, len(record), 0) + record
    (folder / "S0000000.log").write_bytes(bytes(out))


EXTRA_INPUTS.extend([write_wrong_settings, write_capture_without_catalog, write_handmade_capture])


def rows(spark, sql: str) -> list[dict]:
    return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


def truth(demo, name: str):
    path = demo.raw / "truth" / "db2luw" / name
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in path.open()]
    return json.loads(path.read_text())


# --- the oracle ----------------------------------------------------------------------------------


def key_of(image: dict, key_columns: list[str]) -> tuple | str:
    """A row's key; the whole row for a table with no known key (one the catalog lacks)."""
    if key_columns:
        return tuple(image[k] for k in key_columns)
    return json.dumps(dict(image), sort_keys=True)


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
            row = table.pop(key_of(change.before_image, change.key_columns))
            assert {c: change.before_image.get(c) for c in row} == row
        if change.after_image is not None:
            table[key_of(change.after_image, change.key_columns)] = change.after_image
    expected = truth(demo, "tables.json")
    for name, table in expected.items():
        want = [{c: row[c] for c in table["columns"]} for row in table["rows"]]
        got = [{c: row.get(c) for c in table["columns"]} for row in tables.get(name, {}).values()]
        assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, want)), name
    # a table dropped in the capture: its rows at the drop, under its ids and drop LSN, with
    # columns C1..Cn (the catalog export, taken at the end, does not describe it)
    dropped = truth_dropped(demo.raw)
    assert dropped and set(tables) == set(expected) | {f"None.{name}" for name in dropped}
    for name, rows in dropped.items():
        got = sorted(json.dumps(row, sort_keys=True) for row in tables[f"None.{name}"].values())
        assert got == rows, name


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
    names = {
        name: f"None.{dropped_name(table)}" for name, table in truth(demo, "dropped.json").items()
    }
    want = Counter(
        (names.get(c["table"], c["table"]), c["operation"], c["disposition"], c["lsn"])
        for c in lines
    )
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
    # of the demo's captures (the run's warehouse has other log streams of the source: the
    # incremental scenario's, the fault matrix's damaged captures)
    demo_captures = ", ".join(f"'{c}'" for c in (CLEAN, *WRONG, NO_CATALOG, HANDMADE))
    quarantined = rows(
        spark,
        "select capture, source_file, raw_offset, stage, reason from marts.quarantine "
        f"where source_system = 'db2luw' and capture in ({demo_captures}) order by source_file",
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
    # a table created in the capture has no layout before its create table record
    (events,) = by_table["EVENTS"]
    assert events["layout_source"] == "initialize_table" and events["valid_from_lsn"] > 0
    assert [v["layout_source"] for v in by_table["ORDERS"]] == ["catalog"]


def test_a_dropped_tables_ids_reused_by_a_later_table(spark, demo):
    """SALES.LOADS (2, 15) is created, changed, dropped; SALES.AUDIT is created later on the
    same ids: two incarnations, each decoded with its own layout and named on its own."""
    versions = rows(
        spark,
        "select incarnation, table_schema, table_name, layout_source, column_names, "
        "valid_from_lsn, valid_to_lsn, dropped_lsn from intermediate.int_db2luw_table_versions "
        f"where capture = '{CLEAN}' and table_space_identifier = 2 and table_identifier = 15 "
        "order by version_number",
    )
    (loads_truth,) = truth(demo, "dropped.json").values()
    drop = loads_truth["dropped_lsn"]
    assert [v["incarnation"] for v in versions] == [1, 2]
    loads, audit = versions
    assert (loads["table_schema"], loads["table_name"]) == (None, dropped_name(loads_truth))
    assert (loads["dropped_lsn"], loads["valid_to_lsn"]) == (drop, drop + 1)
    assert loads["column_names"] == ["C1", "C2", "C3", "C4"]
    assert (audit["table_schema"], audit["table_name"], audit["valid_to_lsn"]) == (
        "SALES", "AUDIT", None)  # fmt: skip
    assert audit["column_names"] == ["AUDIT_ID", "ACTION", "AMOUNT", "NOTE"]
    assert audit["valid_from_lsn"] > drop
    changes = rows(
        spark,
        "select table_schema, table_name, min(lsn) as first, max(lsn) as last, count(*) as n "
        f"from intermediate.int_db2luw_changes_standardized where capture = '{CLEAN}' "
        "and (table_name like 'TBSPACEID=2,TABLEID=15%' or table_name = 'AUDIT') "
        "group by table_schema, table_name",
    )
    by_name = {c["table_name"]: c for c in changes}
    assert set(by_name) == {"AUDIT", dropped_name(loads_truth)}
    assert by_name[dropped_name(loads_truth)]["last"] < drop < by_name["AUDIT"]["first"]
    events = rows(
        spark,
        "select event_kind, table_schema, table_name from "
        f"intermediate.int_db2luw_catalog_events_extracted where capture = '{CLEAN}' "
        "and table_identifier = 15 and table_space_identifier = 2 order by lsn",
    )
    # the log's own DDL statement record (RDS, before the CREATE TABLE it states) comes first
    assert events[0]["event_kind"] == "ddl_statement"
    named = [(e["event_kind"], e["table_name"]) for e in events
             if e["event_kind"] != "ddl_statement"]  # fmt: skip
    assert named[:2] == [("ddl_create_table", dropped_name(loads_truth)),
                         ("ddl_initialize_table", dropped_name(loads_truth))]  # fmt: skip
    assert ("ddl_drop_table", dropped_name(loads_truth)) in named
    assert named[-2:] == [("ddl_create_table", "AUDIT"), ("ddl_initialize_table", "AUDIT")]


def test_an_update_with_its_after_image_in_the_preceding_insert_is_one_change(spark, demo):
    """The generator's updates logged as an insert of record type 0x04 then an update whose new
    half is 0x02: one update each, both images, both records; the insert is no change."""
    changes = rows(
        spark,
        "select lsn, raw_records, before_image, after_image, decode_warnings, disposition "
        "from intermediate.int_db2luw_changes_standardized "
        f"where capture = '{CLEAN}' and source_change_type = 'update_record_image_elsewhere'",
    )
    lines = {c["lsn"]: c for c in truth(demo, "changes.jsonl")
             if c["record"] == "update_image_elsewhere"}  # fmt: skip
    assert len(changes) == len(lines) == truth(demo, "summary.json")["record_kinds"][
        "update_record_image_elsewhere"]  # fmt: skip
    assert {c["disposition"] for c in changes} >= {"committed", "aborted"}
    for change in changes:
        want = lines[change["lsn"]]
        assert change["before_image"] == want["before"] and change["after_image"] == want["after"]
        assert len(change["raw_records"]) == 2
        # warnings only for the values the log does not carry (a LOB not inline), as the truth
        named = {tuple(w.split(": ")[0].split(" ", 1)) for w in change["decode_warnings"]}
        assert named == {(side, column) for side in ("before", "after")
                         for column in want[f"{side}_unavailable"] or {}}  # fmt: skip
    carriers = {(r["source_file"], r["raw_offset"]) for c in changes for r in c["raw_records"]}
    accounted = rows(
        spark,
        "select source_file, raw_offset, outcome from intermediate.int_db2luw_records_accounted "
        f"where source_file like 'db2luw/{CLEAN}/%'",
    )
    assert {a["outcome"] for a in accounted if (a["source_file"], a["raw_offset"]) in carriers} == {
        "row_change"}  # fmt: skip


def test_handmade_update_with_its_image_elsewhere(spark, demo):
    """Hand-laid bytes: the paired update has both images; the update without its insert keeps
    its before image and says where its after image would have been."""
    changes = rows(
        spark,
        "select transaction_id, operation, change_kind, source_change_type, before_image, "
        "after_image, "
        "decode_warnings, disposition, size(raw_records) as records "
        "from intermediate.int_db2luw_changes_standardized "
        f"where capture = '{HANDMADE}' order by log_position",
    )
    first, second, paired, alone = changes
    assert [(c["transaction_id"], c["operation"]) for c in (first, second)] == [
        (TID_LOAD.hex(), "insert")] * 2  # fmt: skip
    assert (paired["transaction_id"], paired["operation"], paired["records"]) == (
        TID_PAIRED.hex(), "update", 2)  # fmt: skip
    assert paired["before_image"] == {"ID": "7", "NAME": "before"}
    assert paired["after_image"] == {"ID": "7", "NAME": "after"}
    assert (paired["source_change_type"], paired["change_kind"]) == (
        "update_record_image_elsewhere", "update")  # fmt: skip
    assert (alone["transaction_id"], alone["source_change_type"], alone["change_kind"]) == (
        TID_ALONE.hex(), "update_record", "update_before_only")  # fmt: skip
    assert alone["before_image"] == {"ID": "8", "NAME": "old"} and alone["after_image"] is None
    assert [w.split(" (")[0] for w in alone["decode_warnings"]] == ["after image: elsewhere"]
    assert {c["disposition"] for c in changes} == {"committed"}
    files = rows(
        spark,
        "select is_reconciled, records_read from marts.reconciliation "
        f"where source_system = 'db2luw' and capture = '{HANDMADE}' and file_kind = 'log'",
    )
    assert files == [{"is_reconciled": True, "records_read": 8}]


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
    # row undo records; an undo drop table (DOM 5) is a catalog event
    undo = sum(
        v for k, v in record_kinds.items() if k.startswith("undo_") and k.endswith("_record")
    )
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
    (loads,) = truth(demo, "dropped.json").values()
    assert names == {(None, "TBSPACEID=2,TABLEID=14"), (None, "TBSPACEID=2,TABLEID=12"),
                     (None, "TBSPACEID=2,TABLEID=15"), (None, dropped_name(loads))}  # fmt: skip
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
        f"where capture = '{CLEAN}' and table_identifier not in (12, 14, 15)",
    )
    assert len(quarantined) == expected[0]["n"]
    files = rows(
        spark,
        "select is_reconciled, records_quarantined from marts.reconciliation "
        f"where capture = '{NO_CATALOG}' and source_system = 'db2luw'",
    )
    assert files and all(f["is_reconciled"] for f in files)


def test_the_data_source_decodes_most_images_as_the_udf_would(spark, demo):
    """The raw load's images (option images: the catalog layout, column-at-a-time) are taken
    where their digest is the layout version's own; there they equal the UDF's decoding."""
    from udfs.spark_udfs import register_functions

    register_functions(spark)  # the build's SQL functions (it may have run in another session)
    same = "sha2(concat_ws(char(0), v.layout_json, r.byteorder), 256)"
    (counts,) = rows(
        spark,
        f"""
        select
            count(*) as images,
            count_if(r.inline_image_digest = {same}) as inline,
            count_if(
                r.inline_image_digest = {same}
                and not (
                    to_json(r.inline_before_row)
                    <=> to_json(logmart_db2luw_row(r.before_image, v.layout_json, r.byteorder))
                    and to_json(r.inline_after_row)
                    <=> to_json(logmart_db2luw_row(r.after_image, v.layout_json, r.byteorder))
                )
            ) as different
        from staging.stg_db2luw__log_records as r
        inner join intermediate.int_db2luw_table_versions as v
            on
                r.capture = v.capture
                and r.table_space_identifier = v.table_space_identifier
                and r.table_identifier = v.table_identifier
                and r.lsn >= v.valid_from_lsn
                and (v.valid_to_lsn is null or r.lsn < v.valid_to_lsn)
        where
            r.capture = '{CLEAN}' and r.is_decoded and not r.catalog_table
            and r.kind in ('row_insert', 'row_delete', 'row_update') and r.images is null
        """,
    )
    assert counts["images"] > 50, counts  # the demo's clean capture: 93 such records
    assert counts["inline"] > counts["images"] // 2, counts
    assert counts["different"] == 0, counts
