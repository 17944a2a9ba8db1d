"""The generator as an oracle: its truth replays from its own changes.jsonl, and the decoders,
reading only the log files and the catalog export, reproduce the same final tables."""

from __future__ import annotations

import json

import pytest

from logmart_generators.db2luw import generate, generate_benchmark
from tests.db2luw.replay import (
    read_capture,
    read_jsonl,
    replay,
    replay_truth_changes,
    truth_dropped,
    truth_dropped_rows,
    truth_tables,
)
from udfs.db2luw.records import ddl_statements, decode_record, iter_log_records
from udfs.db2luw.rows import decode_row, read_catalog


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    root = tmp_path_factory.mktemp("db2luw")
    summary = generate(root, transactions=200, seed=1)
    return root, summary


def test_truth_replays_from_its_own_changes(capture):
    root, summary = capture
    final, dropped = replay_truth_changes(root)
    assert final == truth_tables(root)
    assert dropped == truth_dropped_rows(root)
    assert set(dropped) == set(summary["dropped_tables"]) == {"SALES.LOADS"}


def test_workload_has_every_feature(capture):
    _, summary = capture
    kinds = summary["record_kinds"]
    for feature in ("create_table", "initialize_table", "create_index", "add_columns",
                    "insert_multiple_records", "insert_record_to_empty_page", "truncate",
                    "decomposed_delete", "decomposed_insert", "update_record", "delete_record",
                    "undo_insert_record", "undo_update_record", "undo_delete_record",
                    "internal_record", "catalog_change", "out_of_row_start",
                    "alter_table_attribute", "drop_table", "undo_drop_table",
                    "update_image_insert", "update_record_image_elsewhere",
                    "update_partition_state"):  # fmt: skip
        assert kinds.get(feature, 0) > 0, feature
    assert set(summary["transactions"]) == {"committed", "aborted", "in_flight"}
    assert summary["changes"]["savepoint_rollback"] > 0
    assert len(summary["files"]) > 1
    assert sum(summary["tables"].values()) > 100


@pytest.mark.parametrize(("byteorder", "framing"),
                         [("little", "filter"), ("big", "filter"), ("little", "lsn"),
                          ("big", "lsn")])  # fmt: skip
def test_decoders_reproduce_the_final_tables(tmp_path, byteorder, framing):
    summary = generate(tmp_path, transactions=120, seed=7, byteorder=byteorder, framing=framing)
    result = replay(tmp_path / "db2luw" / "capture01", framing, byteorder)
    assert result["tables"] == truth_tables(tmp_path)
    dropped = {name: sorted(json.dumps(row, sort_keys=True) for row in rows.values())
               for name, rows in result["dropped"].items()}  # fmt: skip
    assert dropped == truth_dropped(tmp_path) and len(dropped) == 1
    assert "SALES.AUDIT" in result["tables"]  # the table that took the dropped table's ids
    stats = result["stats"]
    assert stats["paired"] == summary["record_kinds"]["update_record_image_elsewhere"] > 0
    assert stats["internal"] == 1 and stats["catalog"] == 2 and stats["in_flight"] > 0
    committed = summary["changes"]["committed"] + summary["record_kinds"]["decomposed_delete"]
    assert stats["committed_changes"] == committed  # a decomposed update is 2 records


def test_default_capture_decodes_every_record(capture):
    root, summary = capture
    records = read_capture(root / "db2luw" / "capture01", "filter", "little")
    assert len(records) == summary["records"]
    kinds = {r["kind"] for r in records}
    assert {
        "row_insert",
        "row_update",
        "row_delete",
        "undo_insert",
        "undo_update",
        "commit",
        "abort",
        "ddl_create_table",
        "ddl_initialize_table",
        "ddl_add_columns",
        "ddl_truncate",
        "ddl_create_index",
        "ddl_alter_table",
        "out_of_row_start",
    } <= kinds
    assert all(r["kind"] != "unknown" for r in records)
    commits = [r for r in records if r["kind"] == "commit"]
    assert all(r["authid"] and r["commit_time"].startswith("2024-03") for r in commits)
    assert {r["record_type_name"] for r in commits} == {"normal_commit", "local_pending_list"}
    compensations = [r for r in records if r["record_type_name"] == "compensation"]
    assert compensations and all(r["header_length"] == 64 for r in compensations)


def test_rows_before_and_after_add_column_use_their_own_layout(capture):
    root, _ = capture
    folder = root / "db2luw" / "capture01"
    changes = read_jsonl(root / "truth/db2luw/changes.jsonl")
    accounts = [c for c in changes if c["table"] == "SALES.ACCOUNTS" and c["after"]]
    assert any("TIER" not in c["after"] for c in accounts)  # logged before the ALTER
    assert any("TIER" in c["after"] for c in accounts)  # and after it
    result = replay(folder)
    assert all("TIER" in row for row in result["tables"]["SALES.ACCOUNTS"].values())


def test_generator_is_deterministic(tmp_path):
    first = generate(tmp_path / "a", transactions=40, seed=3)
    second = generate(tmp_path / "b", transactions=40, seed=3)
    assert first == second
    for name in first["files"]:
        a = (tmp_path / "a/db2luw/capture01" / name).read_bytes()
        assert a == (tmp_path / "b/db2luw/capture01" / name).read_bytes()
    assert (tmp_path / "a/truth/db2luw/changes.jsonl").read_bytes() == (
        tmp_path / "b/truth/db2luw/changes.jsonl").read_bytes()  # fmt: skip
    assert generate(tmp_path / "c", transactions=40, seed=4) != first


def test_benchmark_file_decodes(tmp_path):
    path = tmp_path / "bench" / "bench.log"
    info = generate_benchmark(path, records=250, seed=2)
    assert info["inserts"] == 250 and info["records"] == 253  # 3 commits
    layout = next(iter(read_catalog(path.parent / "catalog").values()))
    rows = []
    for framed in iter_log_records(path.read_bytes()):
        record = decode_record(framed.record)
        if record["kind"] == "row_insert":
            rows.append(decode_row(record["after_image"], layout).values)
    assert len(rows) == 250 and rows[0]["ID"] == "1" and rows[-1]["NAME"] == "name 249"


def test_a_split_log_is_two_captures_of_one_stream_cut_inside_a_committed_transaction(tmp_path):
    summary = generate(tmp_path, transactions=40, seed=11, capture="SAMPLE/c1", split="SAMPLE/c2")
    assert summary["split"]["captures"] == ["SAMPLE/c1", "SAMPLE/c2"]
    [(tid, open_txn)] = summary["split"]["open_transactions"].items()
    assert open_txn == {"changes": 3, "changes_in_first": 2, "disposition": "committed"}
    first, second = (tmp_path / "db2luw/SAMPLE/c1", tmp_path / "db2luw/SAMPLE/c2")
    records = {c: read_capture(c, "filter", "little") for c in (first, second)}
    assert len(records[first]) + len(records[second]) == summary["records"]
    # the log goes on: LSNs rise across the cut, and log file numbers continue
    assert records[first][-1]["lsn"] < records[second][0]["lsn"]
    assert max(p.name for p in first.glob("*.log")) < min(p.name for p in second.glob("*.log"))
    # the transaction open at the cut: two inserts in the first capture, the third and its
    # commit in the second
    mine = {c: [r["kind"] for r in records[c] if r["tid"] == tid] for c in records}
    assert mine[first] == ["row_insert", "row_insert"]
    assert mine[second] == ["row_insert", "commit"]
    # each capture has the catalog export of its own end: the tables there then
    for capture in (first, second):
        assert read_catalog(capture / "catalog")
    assert set(truth_tables(tmp_path)) <= {
        layout.qualified_name for layout in read_catalog(second / "catalog").values()
    }


@pytest.mark.parametrize("byteorder", ["little", "big"])
def test_generated_ddl_statements_decode_to_their_truth(tmp_path, byteorder):
    summary = generate(tmp_path, transactions=60, seed=3, byteorder=byteorder)
    records = read_capture(tmp_path / "db2luw" / "capture01", "filter", byteorder)
    truth = json.loads((tmp_path / "truth" / "db2luw" / "ddl_statements.json").read_text())
    decoded = ddl_statements(records)
    assert [(s.tid, s.lsn, s.text, len(s.lsns)) for s in decoded] == [
        (t["tid"], t["lsn"], t["text"], t["pieces"]) for t in sorted(truth, key=lambda t: t["lsn"])
    ]
    assert all(s.complete for s in decoded)
    assert any(len(s.lsns) > 1 for s in decoded)  # a CREATE TABLE longer than one record
    assert {s.text.split()[0] for s in decoded} == {"CREATE", "ALTER", "DROP", "TRUNCATE"}
    kinds = summary["record_kinds"]
    assert kinds["ddl_statement"] == sum(t["pieces"] for t in truth)
    assert kinds["undo_ddl_statement"] > 0  # the rolled-back DROP TABLE LOADS
    assert any(r["kind"] == "undo_ddl_statement" for r in records)


def test_partitioned_table_and_distinct_type(capture):
    """SALES.SHIPMENTS (2/30): rows on its partitions' ids (4/31, 4/32 in datapartitions.csv;
    5/33 added by the log's ADD PARTITION record only, its rows after it) and a column of the
    distinct type SALES.KILOGRAMS (LENGTH 0 in columns.csv, DECIMAL(9,3) in datatypes.csv)."""
    root, _ = capture
    folder = root / "db2luw" / "capture01"
    catalog = read_catalog(folder / "catalog")
    assert {(4, 31), (4, 32)} <= set(catalog) and (5, 33) not in catalog
    weight = catalog[(2, 30)].columns[3]
    assert (weight.name, weight.type_name, weight.precision, weight.scale) == (
        "WEIGHT", "DECIMAL", 9, 3)  # fmt: skip
    records = read_capture(folder, "filter", "little")
    (added,) = [r for r in records if r["kind"] == "ddl_partition_state"]
    assert (added["table_space_identifier"], added["table_identifier"]) == (5, 33)
    assert (added["master_table_space_identifier"], added["master_table_identifier"]) == (2, 30)
    assert added["partition_action_name"] == "add_partition"
    rows = [r for r in records if r["kind"].startswith("row_") and r["table_space_identifier"]
            in (4, 5)]  # fmt: skip
    ids = {(r["table_space_identifier"], r["table_identifier"]) for r in rows}
    assert ids == {(4, 31), (4, 32), (5, 33)}
    assert all(r["lsn"] > added["lsn"] for r in rows if r["table_space_identifier"] == 5)
    final = replay(folder)["tables"]["SALES.SHIPMENTS"]
    assert final == truth_tables(root)["SALES.SHIPMENTS"]
    assert {row["SHIP_YEAR"] for row in final.values()} == {"2024", "2025", "2026"}
    assert any(row["WEIGHT"] and len(row["WEIGHT"].split(".")[1]) == 3 for row in final.values())
