"""The fault matrix end to end: every case of tests/faults/cases.py is a capture of the test
run's demo raw folder (tests/conftest.py `demo`: when the run has the incremental scenario, its
build from scratch), built in the same build as the other log streams, the real build with
every dbt test; then per case: the build finished, every record is decoded or quarantined with
its file, offset, bytes and a reason, and the reconciliation holds per file. The tests read the
cases' captures only (a case's folder is its capture).

Until 2026-11-29 the matrix was a `logmart build` of its own, a background job in a JVM of its
own; its graph cost the suite 134-158 core-seconds and a wait at the end (docs/performance.md).
"""

from __future__ import annotations

import io
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import EXTRA_INPUTS
from tests.faults import damage as d
from tests.faults.cases import CASE_STREAMS, CASES, write_all
from udfs import cli
from udfs.sources import by_system

pytestmark = pytest.mark.spark

CASE = {case.name: case for case in CASES}
# a case's capture is its log stream (RAW/<source folder>/<case>)
IN_CASES = f"capture in ({', '.join(repr(name) for name in sorted(CASE_STREAMS))})"
# What write_cases wrote, for the tests: each case's facts
FACTS: dict[str, dict] = {}


def write_cases(raw: Path) -> None:
    """Every case's capture under the demo's raw folder (before its build)."""
    with tempfile.TemporaryDirectory() as scratch:
        FACTS.update(write_all(raw, Path(scratch)))


EXTRA_INPUTS.append(write_cases)


@dataclass(frozen=True)
class Matrix:
    raw: Path
    warehouse: Path
    facts: dict
    output: str | None  # what the build printed, the JVM's output too
    summary: dict
    quarantine: list[dict]
    reconciliation: list[dict]
    changes: list[dict]
    transactions: list[dict]
    control_records: list[dict]

    def quarantined(self, capture: str) -> dict[tuple[str, int], dict]:
        """The capture's quarantine rows by (file name, offset)."""
        return {
            (row["source_file"].rsplit("/", 1)[1], row["raw_offset"]): row
            for row in self.quarantine
            if row["capture"] == capture
        }

    def files(self, capture: str) -> dict[str, dict]:
        """The capture's reconciliation rows by file name (catalog files as catalog/NAME)."""
        prefix = f"{CASE[capture].folder}/{capture}/"
        return {
            row["source_file"].removeprefix(prefix): row
            for row in self.reconciliation
            if row["capture"] == capture
        }


def read(spark, table: str, columns: str = "*") -> list[dict]:
    """The rows of the cases' captures in ``table``."""
    sql = f"select {columns} from {table} where {IN_CASES}"
    return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


@pytest.fixture(scope="module")
def matrix(spark, demo) -> Matrix:
    assert set(FACTS) == set(CASE), "the demo's build had no fault case: write_cases did not run"
    return Matrix(
        demo.raw,
        demo.warehouse,
        FACTS,
        demo.output,
        demo.summary,
        read(spark, "marts.quarantine"),
        read(spark, "marts.reconciliation"),
        read(spark, "marts.fct_changes",
             "capture, transaction_id, log_position, operation, disposition, table_name, "
             "raw_file, raw_offset"),
        read(spark, "marts.fct_transactions", "capture, transaction_id, disposition"),
        read(spark, "raw.logmaster_control_records",
             "capture, source_file, raw_offset, record_type, decode_error"),
    )  # fmt: skip


# --- every case ----------------------------------------------------------------------------------


def test_the_build_finishes_and_prints_no_trace(matrix):
    """The build over every case ended, and nothing it printed (dbt, Spark's log, the Python
    workers) has a trace; its summary, as `logmart build` prints it, counts the quarantined
    records of every source."""
    if matrix.output is None:
        pytest.skip("the build's output is read from pytest's capture of file descriptors: not -s")
    assert "Traceback" not in matrix.output
    assert "Exception" not in matrix.output
    # the build's counts are of every capture of the folder, the cases' among them
    quarantined = Counter()
    for row in matrix.reconciliation:
        quarantined[row["source_system"]] += row["records_quarantined"]
    sources = {source["source_system"]: source for source in matrix.summary["sources"]}
    assert set(sources) == {"db2zos", "db2luw", "soliddb"}
    printed = io.StringIO()
    cli.print_summary(matrix.summary, printed)
    per_source = printed.getvalue().split("\n\n")[0].splitlines()  # its first table
    for name, source in sources.items():
        assert source["records_quarantined"] >= quarantined[name] > 0, source
        (printed_row,) = [line.split() for line in per_source if line.split()[:1] == [name]]
        assert printed_row[-1] == str(source["records_quarantined"]), per_source


def test_every_file_is_in_the_reconciliation_once_and_reconciles(matrix):
    on_disk = sorted(
        p.relative_to(matrix.raw).as_posix()
        for case in CASES
        for p in (matrix.raw / case.folder / case.name).rglob("*")
        if p.is_file()
    )
    rows = Counter(row["source_file"] for row in matrix.reconciliation)
    assert sorted(rows) == on_disk and set(rows.values()) == {1}
    for row in matrix.reconciliation:
        assert row["is_reconciled"], row
        assert row["records_read"] == row["records_decoded"] + row["records_quarantined"], row


def test_records_read_are_counted_independently_on_clean_files(matrix):
    for name, row in matrix.files("db2zos_clean").items():
        assert row["records_read"] == len(d.rdw_records(matrix.raw / row["source_file"])), name
    for name, row in matrix.files("db2luw_clean").items():
        if name.endswith(".log"):
            assert row["records_read"] == len(d.db2_records(matrix.raw / row["source_file"]))
    (export,) = [r for n, r in matrix.files("soliddb_clean").items() if n.endswith(".parquet")]
    assert export["records_read"] == pq.read_metadata(matrix.raw / export["source_file"]).num_rows


def test_every_quarantined_record_has_its_place_bytes_reason_and_advice(matrix):
    assert matrix.quarantine
    for row in matrix.quarantine:
        path = matrix.raw / row["source_file"]
        assert path.is_file(), row["source_file"]
        assert row["raw_offset"] >= 0 and row["stage"]
        assert row["record_bytes"] and row["record_length"] >= len(row["record_bytes"])
        assert len(row["reason"]) > 20 and row["what_to_do"]
        content = path.read_bytes()
        if row["source_system"] in ("db2zos", "db2luw"):  # raw_offset is a byte offset
            at = row["raw_offset"]
            assert content[at : at + len(row["record_bytes"])] == row["record_bytes"], row
        else:  # a row number: the row's bytes as read, or the file's first bytes
            assert row["record_bytes"] in content or content.startswith(row["record_bytes"])


@pytest.mark.parametrize("name", [case.name for case in CASES])
def test_each_case_quarantines_what_it_damaged_with_the_reason(matrix, name):
    facts = matrix.facts[name]
    quarantined = matrix.quarantined(name)
    for place, reason in facts["quarantined"].items():
        assert place in quarantined, (place, sorted(quarantined))
        assert reason in quarantined[place]["reason"], quarantined[place]["reason"]
    if facts["exact"]:
        expected = set(facts["quarantined"]) | set(facts.get("also", ()))
        assert set(quarantined) == expected


def test_clean_captures_have_nothing_quarantined_and_no_problem(matrix):
    for name in ("db2zos_clean", "db2luw_clean", "soliddb_clean"):
        assert matrix.quarantined(name) == {}
        assert all(row["problem"] is None for row in matrix.files(name).values())


# --- per case ------------------------------------------------------------------------------------


def transactions(matrix, capture: str) -> dict[str, str]:
    return {t["transaction_id"]: t["disposition"] for t in matrix.transactions
            if t["capture"] == capture}  # fmt: skip


def test_open_units_of_recovery_are_in_flight(matrix):
    found = transactions(matrix, "db2zos_clean")
    for uorid in matrix.facts["db2zos_clean"]["in_flight_uorids"]:
        assert found[uorid] == "in_flight"


def test_a_transaction_cut_by_the_end_of_the_capture_is_in_flight_with_its_changes(matrix):
    tid = matrix.facts["db2luw_cut_transaction"]["cut_tid"]
    assert transactions(matrix, "db2luw_cut_transaction")[tid] == "in_flight"
    changes = [c for c in matrix.changes if c["capture"] == "db2luw_cut_transaction"
               and c["transaction_id"] == tid]  # fmt: skip
    assert changes and {c["disposition"] for c in changes} == {"in_flight"}
    trxid = matrix.facts["soliddb_cut_transaction"]["cut_trxid"]
    solid = transactions(matrix, "soliddb_cut_transaction")
    assert solid[trxid] == "in_flight"


def test_unknown_control_record_types_are_kept_and_counted_not_quarantined(matrix):
    for name in ("db2zos_unknown_types", "db2zos_bit_flips"):
        file_name, offset, record_type = matrix.facts[name]["unknown_control"]
        (record,) = [r for r in matrix.control_records if r["capture"] == name
                     and r["raw_offset"] == offset]  # fmt: skip
        assert (record["record_type"], record["decode_error"]) == (record_type, None)
        assert (file_name, offset) not in matrix.quarantined(name)
        control = matrix.files(name)[file_name]
        assert control["records_quarantined"] == 0 and control["is_reconciled"]


def test_a_table_that_lost_a_column_description_quarantines_its_row_images(matrix):
    facts = matrix.facts["db2zos_bit_flips"]
    others = {k: v for k, v in matrix.quarantined("db2zos_bit_flips").items()
              if k not in facts["quarantined"] and k not in facts["also"]}  # fmt: skip
    assert others and {row["stage"] for row in others.values()} == {"row_image"}


def test_a_record_whose_rdw_lies_is_the_only_one_lost(matrix):
    for place, row in matrix.quarantined("db2zos_rdw_lies").items():
        assert row["stage"] in ("decode", "segments"), place
    files = matrix.files("db2zos_rdw_lies")
    for name in ("LOGM.EXTRACT1.F0002", "LOGM.EXTRACT1.F0003", "LOGM.EXTRACT1.F0004"):
        damaged = [p for p in matrix.facts["db2zos_rdw_lies"]["quarantined"] if p[0] == name]
        assert len(damaged) == 1
        assert files[name]["records_decoded"] > 15  # the records after the damaged one too


def test_an_extract_without_its_control_file_says_so(matrix):
    for name, row in matrix.files("db2zos_no_control").items():
        assert "the extract has no control file" in row["problem"], name
    stages = {row["stage"] for row in matrix.quarantined("db2zos_no_control").values()}
    assert stages == {"row_image"}


def test_missing_data_sets_and_log_files_are_named(matrix):
    for name in ("db2zos_control_only", "db2zos_missing_file"):
        control = matrix.files(name)["LOGM.EXTRACT1.F0001"]
        for data_set in matrix.facts[name]["missing"]:
            assert data_set in control["problem"], control["problem"]
        assert "copy them in" in control["problem"]
    (missing,) = matrix.facts["db2luw_segments"]["missing"]
    after = matrix.files("db2luw_segments")["S0000002.log"]
    assert (
        "1 .log file(s) missing before it (the names go from S0000000.log to S0000002.log"
        in (after["problem"])
    )
    assert missing == "S0000001.log"
    for name in ("db2luw_catalog_only", "soliddb_catalog_only"):
        for row in matrix.files(name).values():
            assert "a catalog export but no log file" in row["problem"]


def test_a_record_read_twice_is_quarantined_as_a_repeat_and_counted_once(matrix):
    for name in ("db2zos_segments", "db2luw_segments", "soliddb_segments"):
        repeats = [r for r in matrix.quarantined(name).values() if r["stage"] == "repeat"]
        expected = [p for p, why in matrix.facts[name]["quarantined"].items()
                    if "repeats" in why or why == "LOGADDR"]  # fmt: skip
        assert len(repeats) == len(expected), name
        changes = Counter(
            (c["transaction_id"], c["log_position"], c["operation"], c["table_name"])
            for c in matrix.changes
            if c["capture"] == name
        )
        assert max(changes.values()) == 1, name
    file_name, offset = matrix.facts["db2zos_segments"]["copied_record"]
    kept = [c for c in matrix.changes if c["capture"] == "db2zos_segments"
            and c["raw_file"].endswith(file_name) and c["raw_offset"] == offset]  # fmt: skip
    assert len(kept) == 1


def test_a_missing_segment_quarantines_the_rest_of_its_change(matrix):
    uorid = matrix.facts["db2zos_segments"]["missing_segment_uorid"]
    rows = [r for r in matrix.quarantined("db2zos_segments").values() if r["stage"] == "segments"]
    assert rows and all("missing segment(s) 2 of" in r["reason"] for r in rows)
    assert all(uorid in r["reason"] for r in rows)


def test_odd_files_are_listed_for_what_they_are(matrix):
    for name in ("db2zos_odd_files", "db2luw_odd_files", "soliddb_odd_files"):
        files = matrix.files(name)
        for empty in matrix.facts[name]["empty"]:
            assert (files[empty]["file_kind"], files[empty]["records_read"]) == ("empty", 0)
            assert files[empty]["problem"] is None
        for ignored in matrix.facts[name].get("ignored", []):
            assert files[ignored]["problem"].startswith("not read")
    headless = matrix.files("soliddb_truncated")["sys_log_d.csv"]
    assert headless["records_read"] == 0 and "no record could be read" in headless["problem"]


# --- strict mode ---------------------------------------------------------------------------------


def test_strict_mode_fails_on_the_first_bad_record_with_its_message(
    matrix, spark, monkeypatch, capsys
):
    """`logmart build` with LOGMART_STRICT=1 on the matrix's warehouse, its marts as built
    (the rebuild itself is skipped: the demo's build made them): exit 2, one line naming the
    first quarantined record in file order, no trace. The warehouse holds other captures than
    the cases' (the demo's, the incremental scenario's): the first is of them all."""
    monkeypatch.setattr("udfs.pipeline.build", lambda *args, **options: {"sources": []})
    monkeypatch.setenv("LOGMART_STRICT", "1")
    code = cli.main(["build", "--raw", str(matrix.raw), "--warehouse", str(matrix.warehouse)])
    out, err = capsys.readouterr()
    quarantine = [row.asDict() for row in spark.table("marts.quarantine").collect()]
    # file order, a row without an offset (a file's problem) first, as Spark sorts nulls first
    first = min(quarantine, key=lambda r: (r["source_file"], r["raw_offset"] is not None,
                                           r["raw_offset"] or 0))  # fmt: skip
    unit = by_system(first["source_system"]).raw_offset_unit
    place = "" if first["raw_offset"] is None else f" {unit} {first['raw_offset']}"
    what = f", {first['record_type']}" if first["record_type"] else ""
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"logmart: strict mode: {first['source_file']}{place} (stage {first['stage']}{what}): "
        f"{' '.join(first['reason'].split())}. What to do: {first['what_to_do']} (or build without "
        "--strict to quarantine such records and go on)"
    ]
