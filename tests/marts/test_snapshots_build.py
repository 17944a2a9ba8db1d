"""Base snapshots end to end (tests/marts/snapshot_scenario.py: a phase of the incremental
scenario, on its warehouse of its own, run on the test run's JVM before the shared session
starts): a snapshot plus the log replays to the generator's final tables, the build stays
incremental, a truncate's UNDO re-inserts rows only the snapshot knew, bad snapshots are
quarantined with their reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

SOURCES = ("soliddb", "db2luw", "db2zos")
SNAPSHOT_TABLES = ("snapshots", "snapshot_rows")  # raw tables


@pytest.fixture(scope="module")
def result(own_warehouse: None, stream_scenario: dict[str, Any]) -> dict[str, Any]:
    return {**stream_scenario["snapshots"], "builds": stream_scenario["builds"]}


pytestmark = pytest.mark.spark


def test_adding_snapshots_decodes_no_log_again_and_runs_dbt(result):
    builds = result["builds"]
    assert builds["snapshots"]["load"]["files_decoded"] == 0
    assert builds["snapshots"]["load"]["mode"] == "incremental"
    assert builds["snapshots"]["dbt"] == "built"
    # the raw rows of the logs are the same Parquet files as before the snapshots came
    logs = {t: p for t, p in builds["again"]["raw"].items() if t not in SNAPSHOT_TABLES}
    assert logs and all(logs.values())
    assert {t: p for t, p in builds["snapshots"]["raw"].items() if t not in SNAPSHOT_TABLES} == logs
    assert all(builds["snapshots"]["raw"][t] for t in SNAPSHOT_TABLES)
    assert builds["snapshots_again"]["dbt"] == "current"


@pytest.mark.parametrize("system", SOURCES)
def test_a_snapshot_plus_the_log_replays_to_the_generators_final_table(result, system):
    snapshot = result["snapshots"][system]["middle"]
    table = result["tables"][system]["middle"]
    assert snapshot["rows"] > 0
    assert table["current_equals_truth"], (table["current"], table["truth"])
    assert table["as_of_equals_truth"], (table["as_of"], table["truth"])
    # the snapshot's rows opened versions, the log then updated or deleted some of them, and
    # no row had to be invented as there before the log
    assert table["snapshot_versions"] == snapshot["rows"]
    assert set(table["snapshot_versions_ended_by"]) & {"update", "delete"}
    assert table["before_log_versions"] == 0
    # changes at or before the snapshot's position are not applied again
    assert table["first_change_version_from"] > snapshot["position"]


def test_a_time_maps_to_the_last_commit_at_or_before_it(result):
    snapshot = result["snapshots"]["db2luw"]["middle"]
    assert snapshot["taken_at"]
    resolved = {r["source_file"]: r for r in result["resolved"]}
    row = resolved[f"db2luw/SAMPLE/snapshots/{snapshot['file']}.parquet"]
    assert row["given_position"] is None
    assert row["snapshot_position"] == snapshot["position"]
    assert row["snapshot_status"] == "base"


@pytest.mark.parametrize("system", SOURCES)
def test_a_truncates_undo_reinserts_rows_only_the_snapshot_knew(result, system):
    # every generator truncates a whole table whose rows the log showed before the truncate
    # (solidDB's is renamed afterwards: it is found among the log's tables, not the truth's)
    snapshot = result["snapshots"][system]["truncated"]
    table = result["tables"][system]["truncated"]
    assert "31999" in table["truncate_undo"]
    assert "truncate" in table["snapshot_versions_ended_by"]
    if snapshot["replayable"] and table["in_truth"]:
        assert table["current_equals_truth"]


def test_bad_snapshots_are_quarantined_with_what_to_do(result):
    reasons = {Path(r["source_file"]).name: r["reason"] for r in result["quarantine"]}
    assert set(reasons) == {"BAD_COLUMN.csv", "NO_SUCH_TABLE.csv", "NO_SIDE.csv"}
    assert "has column(s) NOT_A_COLUMN" in reasons["BAD_COLUMN.csv"]
    assert "NO_SUCH of snapshot" in reasons["NO_SUCH_TABLE.csv"]
    assert "is not a table of log stream PROD" in reasons["NO_SUCH_TABLE.csv"]
    assert "has no side file" in reasons["NO_SIDE.csv"]
    assert all(r["what_to_do"] for r in result["quarantine"])
    assert result["reconciliation_problems"] == []


def test_the_snapshot_models_pass_their_dbt_tests(result):
    # every data test of the snapshot tables and of the models built on them ran in the build
    # from scratch with the snapshots in, and passed; the user's check of the quarantine warns
    # (severity warn): the bad snapshots are in it
    tests = result["dbt_tests"]
    assert any("stg_logmart__snapshot_rows" in test for test in tests)
    assert any("fct_row_history" in test for test in tests)
    failed = {test: status for test, status in tests.items() if status != "pass"}
    assert failed == {"test.logmart.assert_nothing_quarantined": "warn"}
