"""Idempotent and incremental builds (issue #6 part 3), on one scenario with a warehouse of its
own (tests/incremental/scenario.py, so the shared demo warehouse is untouched), run on the test
run's JVM before the shared session starts (fixture `stream_scenario`).

Every source's workload is cut into two captures of one log stream with transactions open at
the cut. Build ``first`` has capture 1; build ``second`` adds capture 2 and copies of capture-1
files; ``again`` builds the same folder once more; ``snapshots`` adds base snapshots
(tests/marts/test_snapshots_build.py checks what they do); ``scratch`` builds it from scratch.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.incremental.scenario import CAPTURES, COPIES, DB2LUW, LOGMASTER, SOLIDDB

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def scenario(own_warehouse: None, stream_scenario: dict[str, Any]) -> dict[str, Any]:
    return stream_scenario


def _files(build: dict) -> dict[str, dict]:
    return {f["source_file"]: f for f in build["files"]}


def _mart(build: dict, name: str) -> list[dict]:
    return [json.loads(row) for row in build["marts"][name]]


def _open_transactions(scenario: dict) -> list[tuple[str, str, dict]]:
    """(source_system, transaction_id, what the generator says) of every transaction open at
    the cut between the two captures."""
    found = []
    for system, summary in scenario["generated"].items():
        assert summary["split"]["captures"] == list(CAPTURES[system])
        for txn_id, truth in summary["split"]["open_transactions"].items():
            found.append((system, txn_id, truth))
    return found


def test_the_second_build_decodes_only_the_new_files(scenario):
    first, second = scenario["builds"]["first"], scenario["builds"]["second"]
    assert second["load"]["mode"] == "incremental"
    before, after = _files(first), _files(second)
    new = {p for p, f in after.items() if p not in before and f["duplicate_of"] is None
           and f["load_key"] is not None}  # fmt: skip
    decoded = {
        p for p, f in after.items()
        if f["loaded_at"] and f["loaded_at"] != before.get(p, {}).get("loaded_at")
    }  # fmt: skip
    # The copy that sorts before its original replaces it: decoded once, from its own path.
    assert decoded == new
    assert "logmaster/DB2P/LOGM.EXTRACT1/A.COPY.F0002" in decoded
    assert second["load"]["files_decoded"] == len(new)
    assert {p.split("/")[1] for p in new} == {"DB2P", "SAMPLE", "PROD"}
    # Every file decoded in the first build and still decoded: its raw rows are the same
    # Parquet files, untouched.
    for table, parts in first["raw"].items():
        for path, files in parts.items():
            if after[path]["duplicate_of"] is None:
                assert second["raw"][table][path] == files, (table, path)
            else:
                assert path not in second["raw"][table], (table, path)


def test_incremental_models_recompute_only_captures_that_changed(scenario):
    first, second = scenario["builds"]["first"], scenario["builds"]["second"]
    unchanged = {"int_db2luw_row_images_decoded": DB2LUW[0],
                 "int_soliddb_row_images_decoded": SOLIDDB[0]}  # fmt: skip
    for model, capture in unchanged.items():
        assert first["models"][model][capture]["parts"], model
        assert second["models"][model][capture] == first["models"][model][capture], model
    # Extract 1 gained a file (a copy that sorts first): recomputed, one partition. Log
    # Master's images are decoded in its settlement's query, whose table is by capture.
    model = "int_logmaster_changes_standardized"
    old, new = first["models"][model][LOGMASTER[0]], second["models"][model][LOGMASTER[0]]
    assert new["fingerprint"] != old["fingerprint"]
    assert not set(new["parts"]) & set(old["parts"])
    by_capture = {"db2zos": "int_logmaster_changes_standardized",
                  "db2luw": "int_db2luw_row_images_decoded",
                  "soliddb": "int_soliddb_row_images_decoded"}  # fmt: skip
    for system, captures in CAPTURES.items():
        model = by_capture[system]
        assert set(second["models"][model]) == set(captures), model


def test_building_the_same_folder_again_decodes_nothing_and_changes_nothing(scenario):
    second, again = scenario["builds"]["second"], scenario["builds"]["again"]
    assert again["load"]["mode"] == "incremental"
    assert (again["load"]["files_decoded"], again["load"]["files_hashed"]) == (0, 0)
    assert again["files"] == second["files"]
    assert again["raw"] == second["raw"]
    # raw.files and raw.captures are not written again (the same Parquet files), while the
    # build that found new files wrote them
    assert again["listing"] == second["listing"]
    first = scenario["builds"]["first"]
    assert all(second["listing"][name] != first["listing"][name] for name in second["listing"])
    assert again["models"] == second["models"]
    assert again["marts"] == second["marts"]
    # nothing changed since the last successful build: dbt did not run again
    assert (second["dbt"], again["dbt"]) == ("built", "current")


def test_incremental_marts_equal_a_build_from_scratch(scenario):
    # the last incremental build: two captures, copies, then base snapshots, built in turn
    incremental, scratch = scenario["builds"]["snapshots"], scenario["builds"]["scratch"]
    assert incremental["load"]["mode"] == "incremental"
    assert scratch["load"]["mode"] == "full"
    assert set(incremental["marts"]) == set(scratch["marts"])
    assert {"fct_changes", "fct_transactions", "reconciliation"} <= set(scratch["marts"])
    for mart, rows in scratch["marts"].items():
        assert rows, mart
        extra = Counter(incremental["marts"][mart]) - Counter(rows)
        missing = Counter(rows) - Counter(incremental["marts"][mart])
        assert not extra and not missing, (mart, list(extra)[:3], list(missing)[:3])
    # clean captures quarantine nothing: only the bad snapshots are quarantined
    stages = {json.loads(row)["stage"] for row in scratch["marts"]["quarantine"]}
    assert stages == {"snapshot"}


def test_transactions_open_at_the_cut_are_committed_with_all_their_changes(scenario):
    cases = _open_transactions(scenario)
    assert {system for system, _, _ in cases} == set(CAPTURES)
    first = {(t["source_system"], t["transaction_id"].upper()): t
             for t in _mart(scenario["builds"]["first"], "fct_transactions")}  # fmt: skip
    for label in ("second", "scratch"):
        build = scenario["builds"][label]
        transactions = {(t["source_system"], t["transaction_id"].upper()): t
                        for t in _mart(build, "fct_transactions")}  # fmt: skip
        changes = _mart(build, "fct_changes")
        for system, txn_id, truth in cases:
            key = (system, txn_id.upper())
            if truth["changes_in_first"]:  # capture 1 alone: still open
                assert first[key]["disposition"] == "in_flight", key
            txn = transactions[key]
            assert txn["disposition"] == truth["disposition"] == "committed", key
            assert txn["change_count"] == truth["changes"], key
            assert txn["log_stream"] == CAPTURES[system][0].split("/")[0]
            mine = [c for c in changes
                    if (c["source_system"], c["transaction_id"].upper()) == key]  # fmt: skip
            assert len(mine) == truth["changes"], key
            assert sorted(c["change_seq"] for c in mine) == list(range(1, truth["changes"] + 1))
            assert {c["disposition"] for c in mine} == {"committed"}, key
            assert {c["commit_position"] for c in mine} == {txn["commit_position"]} != {None}
            if 0 < truth["changes_in_first"] < truth["changes"]:
                assert txn["captures"] == sorted(CAPTURES[system]), key


def test_a_copied_file_is_read_once(scenario):
    build = scenario["builds"]["second"]
    files = _files(build)
    for copy, original in COPIES:
        first, second = sorted([copy, original])
        assert files[second]["duplicate_of"] == first
        assert files[first]["duplicate_of"] is None
        assert files[copy]["content_hash"] == files[original]["content_hash"]
    reconciliation = {r["source_file"]: r for r in _mart(build, "reconciliation")}
    for copy, original in COPIES:
        first, second = sorted([copy, original])
        assert reconciliation[second]["records_read"] == 0
        assert reconciliation[first]["records_read"] > 0
        assert reconciliation[second]["duplicate_of"] == first
        assert reconciliation[first].get("duplicate_of") is None  # (to_json leaves nulls out)
        # a copy is not a problem: --strict passes on undamaged captures plus copies
        assert reconciliation[second].get("problem") is None, reconciliation[second]
    assert build["strict"] is None
    # No change is there twice: one row per (transaction, place in the log).
    places = Counter(
        (c["source_system"], c["log_stream"], c["transaction_id"], c["log_position"])
        for c in _mart(build, "fct_changes")
    )
    assert [place for place, n in places.items() if n > 1] == []


@pytest.mark.parametrize("system", sorted(CAPTURES))
def test_sql_and_asof_work_over_the_whole_stream(scenario, system):
    """`logmart sql` and `logmart asof` over a stream cut into two captures, executed on
    DuckDB: REDO of the whole stream and the rows as of its last commit are the generator's
    final tables; each committed transaction the cut splits is one UNDO script with all its
    changes (from both captures), which takes the tables back to the state before it, and
    its REDO script forward again."""
    import duckdb

    from tests.marts.oracle import (
        create_tables,
        masked,
        replayable_tables,
        table_rows,
        truth_rows,
    )
    from tests.replay import truth_tables

    stage, found = Path(scenario["stage"]), scenario["streams"][system]
    truth = json.loads((stage / "truth" / system / "tables.json").read_text())
    tables = replayable_tables(stage, system)
    assert tables

    def database(until: str, inclusive: bool):
        """DuckDB with the REDO statements of every transaction committed before ``until``
        (and at it, when ``inclusive``)."""
        con = duckdb.connect()
        types = create_tables(con, truth, tables, found["types"])
        for change in found["redo"]:
            position = change["commit_position"]
            if change["table_name"] in tables and (
                position < until or (inclusive and position == until)
            ):
                assert change["redo_sql"] is not None, change
                con.execute(change["redo_sql"])
        return con, types

    # values the log does not carry (issue 14 item 9) are left out of REDO and UNDO: a column
    # that holds one anywhere is not compared between two DuckDB states, and the truth's
    # final rows mask the values it names on both sides
    unknowable = _columns_with_values_not_in_the_log(stage, system)

    def state(con, types) -> dict:
        return {
            name: table_rows(con, name, {c: t for c, t in types[name].items()
                                         if c not in unknowable.get(name, set())})
            for name in tables
        }  # fmt: skip

    con, types = database(found["last_position"], inclusive=True)
    expected = truth_tables(stage, system)
    for name in tables:
        want = masked(truth_rows(expected[name], types[name]), truth[name], types[name])
        got = masked(table_rows(con, name, types[name]), truth[name], types[name])
        assert got == want, name
        # `logmart asof` prints <unavailable: REASON> where the truth's value is not in the log
        shown = _with_placeholders(expected[name], truth[name].get("unavailable"))
        assert truth_rows(found["asof"].get(name, []), types[name]) == truth_rows(
            shown, types[name]
        ), name

    split = scenario["generated"][system]["split"]["open_transactions"]
    committed = {t for t, truth in split.items()
                 if truth["disposition"] == "committed" and truth["changes"]}  # fmt: skip
    # a split transaction of DDL only (a generator may count its DDL records as changes) has
    # no statements: it is a transaction of the stream with its schema changes, no row change
    for truth_id, rows in found["without_rows"].items():
        assert rows == [{"change_count": 0, "schema_change_count": split[truth_id]["changes"]}]
    assert set(found["scripts"]) | set(found["without_rows"]) == committed
    assert found["scripts"]
    replayed = 0
    for truth_id, script in found["scripts"].items():
        mine = [c for c in found["redo"] if c["transaction_id"] == script["transaction_id"]]
        assert len(mine) == split[truth_id]["changes"], truth_id
        header = script["undo"].splitlines()[:2]
        assert f"{len(mine)} change(s) of 1 transaction(s)" in header[0], header
        assert header[1].startswith(
            f"-- source {system}, log stream {found['stream']} "
            f"(capture(s) {', '.join(CAPTURES[system])})"
        ), header
        if not {c["table_name"] for c in mine} <= set(tables):
            continue  # a table whose DDL the log changes: replaying it needs the DDL too
        (position,) = {c["commit_position"] for c in mine}
        after, types = database(position, inclusive=True)
        before, _ = database(position, inclusive=False)
        assert state(after, types) != state(before, types)
        after.execute(script["undo"])
        assert state(after, types) == state(before, types), truth_id
        after.execute(script["redo"])
        assert state(after, types) == state(database(position, inclusive=True)[0], types)
        replayed += 1
    assert replayed, "no split transaction replayed"


def _columns_with_values_not_in_the_log(stage: Path, system: str) -> dict[str, set[str]]:
    """Per 'SCHEMA.TABLE': the columns the generator's truth names in any change's
    before_unavailable / after_unavailable."""
    found: dict[str, set[str]] = {}
    for line in (stage / "truth" / system / "changes.jsonl").read_text().splitlines():
        change = json.loads(line)
        name = change.get("table") or f"{change.get('table_owner')}.{change.get('table_name')}"
        for side in ("before_unavailable", "after_unavailable"):
            found.setdefault(name, set()).update(change.get(side) or {})
    return found


def _with_placeholders(rows: list[dict], unavailable: list[dict] | None) -> list[dict]:
    """The truth's final rows as `logmart asof` prints them: a value the log does not carry
    is its placeholder (udfs.unavailable.as_of_placeholder)."""
    from udfs.unavailable import as_of_placeholder

    if not unavailable:
        return rows
    return [
        {k: as_of_placeholder(why[k]) if k in (why or {}) else v for k, v in row.items()}
        for row, why in zip(rows, unavailable, strict=True)
    ]


def _debezium_records(files: dict[str, list[str]]) -> dict[str, list[dict]]:
    """The Kafka records of each topic file, without what may differ between two exports of
    the same changes: ``ts_ms`` of change events (the time of the export) and
    ``source.change_id`` (names the file the change was read from: the copy A.COPY.F0002 that
    arrives with capture 2 sorts before its original and becomes the file decoded)."""
    found = {}
    for name, lines in files.items():
        if not name.endswith(".jsonl"):
            continue
        records = [json.loads(line) for line in lines]
        for record in records:
            if record["value"] is not None and "op" in record["value"]:
                del record["value"]["ts_ms"]
                del record["value"]["source"]["change_id"]
        found[name] = records
    return found


def test_a_stream_exported_in_two_runs_equals_one_export_of_the_whole_stream(scenario):
    """`logmart export debezium` after capture 1 and again after capture 2 (one out folder,
    its checkpoint) gives the files one export of the whole stream gives: no change twice,
    none missing, transactions open at the cut exported once, with their commit."""
    exports = scenario["debezium"]
    written = exports["written"]
    streams = {"db2zos.DB2P", "db2luw.SAMPLE", "soliddb.PROD"}
    for label in ("first", "second"):  # both runs wrote changes of every stream
        prefixes = {name.rsplit(".", 2)[0] for name in written[label] if "transaction" in name}
        assert prefixes == streams, (label, sorted(written[label]))
    assert written["again"] == {}  # nothing new: nothing written
    assert exports["files"]["again"] == exports["files"]["second"]  # checkpoint kept too
    runs, once = exports["files"]["second"], exports["once"]
    assert _debezium_records(runs) == _debezium_records(once)
    checkpoints = [json.loads("\n".join(f["logmart-checkpoint.json"])) for f in (runs, once)]
    for checkpoint in checkpoints:
        for entry in checkpoint["streams"].values():
            entry.pop("exported_at")
            entry.pop("files")  # sizes differ by the change_ids' file names (see above)
    assert checkpoints[0] == checkpoints[1]

    # the export of the whole stream has every committed change of the build, each once
    changes = [c for c in _mart(scenario["builds"]["second"], "fct_changes")
               if c["disposition"] == "committed"]  # fmt: skip
    ops: dict[str, list[str]] = {}
    for name, lines in once.items():
        if name.endswith(".jsonl") and not name.endswith(".transaction.jsonl"):
            for value in (json.loads(line)["value"] for line in lines):
                if value is not None:  # not a tombstone
                    ops.setdefault(value["source"]["change_id"], []).append(value["op"])
    assert set(ops) == {c["change_id"] for c in changes}
    # each change once: its own op, or an update of the key as a d and a c
    assert [(i, o) for i, o in ops.items() if len(o) > 1 and o != ["d", "c"]] == []
    # transactions of the two runs: each framed by BEGIN and END, once
    ends = Counter()
    for name, records in _debezium_records(runs).items():
        if name.endswith(".transaction.jsonl"):
            statuses = [r["value"]["status"] for r in records]
            assert statuses == ["BEGIN", "END"] * (len(records) // 2), name
            for record in records[1::2]:
                ends[(name, record["value"]["id"])] += 1
    assert [key for key, n in ends.items() if n > 1] == []
    committed = {(c["source_system"], c["transaction_id"]) for c in changes}
    assert len(ends) == len(committed)
    for system, txn_id, truth in _open_transactions(scenario):
        if truth["changes_in_first"]:  # open at the cut: not in the first run's files
            first = _debezium_records(exports["files"]["first"])
            assert not any(
                r["value"]["id"].upper() == txn_id.upper()
                for name, records in first.items() if name.startswith(system)
                and name.endswith(".transaction.jsonl") for r in records
            ), (system, txn_id)  # fmt: skip
