"""DDL mart (marts.fct_schema_changes) and schema as of any position (marts.dim_table_versions).

Expectations come from each generator's ground truth (truth/<source>/…), mapped to logmart's
change kinds by tables written here from the specs, not read from the marts: Log Master CHANGE
TYPE and the statement text of CO records; Db2 LUW record kinds the generator counts; solidDB
DDL LOGRECIDs (004_… "DDL record ids") and the statement text of ALTER TABLE.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import jinja2
import pytest

from tests.marts.oracle import generator_capture

pytestmark = pytest.mark.spark

MACROS = Path(__file__).resolve().parents[2] / "macros" / "schema_changes.sql"

# Log Master CHANGE TYPE of the records that are schema changes (003_… CHANGE TYPE).
LOGMASTER_KINDS = {"CM": "db2_command", "SC": "status_change", "E": "exchange", "DT": "truncate",
                   "DR": "truncate"}  # fmt: skip
# The statements the generator writes in CO records, by their leading words.
STATEMENT_KINDS = {"CREATE INDEX": "create_index", "CREATE TABLE": "create_table",
                   "DROP TABLE": "drop_table", "DROP INDEX": "drop_index"}  # fmt: skip
# Db2 LUW record kinds the generator counts (truth summary.json record_kinds) that are DDL.
DB2LUW_KINDS = {"create_table": "create_table", "initialize_table": "initialize_table",
                "create_index": "create_index", "alter_table_attribute": "alter_table",
                "add_columns": "add_column", "truncate": "truncate",
                "drop_table": "drop_table",
                "update_partition_state": "partition_state"}  # fmt: skip
# solidDB DDL LOGRECIDs (004_… "DDL record ids").
SOLIDDB_LOGRECIDS = {45: "create_table", 17: "drop_table", 47: "rename_table", 22: "alter_table",
                     73: "truncate", 16: "create_index", 18: "drop_index", 46: "create_view",
                     20: "drop_view", 28: "create_sequence", 30: "drop_sequence",
                     27: "create_counter", 29: "drop_counter"}  # fmt: skip
NOT_ABOUT_A_TABLE = {"create_view", "drop_view", "create_sequence", "drop_sequence",
                     "create_counter", "drop_counter"}  # fmt: skip


def truth_lines(raw: Path, source: str, name: str) -> list[dict]:
    path = raw / "truth" / source / name
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def schema_changes(spark, source: str, capture: str) -> list:
    return spark.sql(
        "select * from marts.fct_schema_changes "
        f"where source_system = '{source}' and capture = '{capture}' order by log_position"
    ).collect()


def column_names(definition: str | None) -> list[str] | None:
    """`ID INTEGER, NAME VARCHAR(40)` -> ['ID', 'NAME'] (the demo's names have no blanks)."""
    return None if definition is None else [c.split(" ")[0] for c in definition.split(", ")]


# --- statement kinds: the macro's SQL run on statements written by hand --------------------


STATEMENTS = [
    ("CREATE INDEX SALES.XORDERS2 ON SALES.ORDERS (CUST_ID ASC)", "create_index", "SALES.XORDERS2"),
    ("create unique index x1 on t (a)", "create_index", "X1"),
    ("CREATE TABLE A.B (X INTEGER)", "create_table", None),
    ("  create\n   view v1 as select 1 from t", "create_view", "V1"),
    ("CREATE SEQUENCE S.SEQ1 START WITH 1", "create_sequence", "S.SEQ1"),
    ("DROP TABLE A.B", "drop_table", None),
    ("DROP INDEX A.I", "drop_index", "A.I"),
    ("ALTER TABLE T ADD COLUMN C INTEGER", "add_column", None),
    ("ALTER TABLE T ADD C INTEGER", "add_column", None),
    ("ALTER TABLE T ADD CONSTRAINT PK PRIMARY KEY (A)", "alter_table", None),
    ("ALTER TABLE T ADD PRIMARY KEY (A)", "alter_table", None),
    ("ALTER TABLE T DROP COLUMN C", "drop_column", None),
    ("ALTER TABLE T ALTER COLUMN C SET DATA TYPE VARCHAR(20)", "alter_column", None),
    ("ALTER TABLE T RENAME COLUMN A TO B", "rename_column", None),
    ("ALTER TABLE T RENAME TO U", "rename_table", None),
    ("ALTER TABLE T DATA CAPTURE CHANGES", "alter_table", None),
    ("RENAME TABLE A.T TO U", "rename_table", None),
    ("RENAME INDEX A.I TO J", "other_ddl", None),
    ("TRUNCATE TABLE T IMMEDIATE", "truncate", None),
    ("GRANT SELECT ON T TO PUBLIC", "other_ddl", None),
    (None, None, None),
]


def test_statement_kinds_from_leading_words(spark):
    template = jinja2.Environment().from_string(
        MACROS.read_text("utf-8")
        + "{{ ddl_statement_kind('t') }} as kind, {{ ddl_statement_object('t') }} as object"
    )
    values = ", ".join(
        "(cast(null as string))" if s is None else "('" + s.replace("'", "''") + "')"
        for s, _, _ in STATEMENTS
    )
    rows = spark.sql(
        f"select t, {template.render()} from values {values} as statements(t)"
    ).collect()
    assert [(r.t, r.kind, r.object) for r in rows] == STATEMENTS


# --- every source's DDL events, as the generators wrote them -------------------------------


def test_log_master_catalog_events_and_truncates(spark, demo):
    capture = generator_capture(demo.raw, "db2zos")
    truth = [c for c in truth_lines(demo.raw, "db2zos", "changes.jsonl")
             if c["change_type"] in {*LOGMASTER_KINDS, "CO"}]  # fmt: skip
    assert {c["change_type"] for c in truth} >= {"CO", "CM", "SC", "E", "DT", "DR"}
    rows = {r.log_position: r for r in schema_changes(spark, "db2zos", capture)}
    assert len(rows) == len(truth)
    for change in truth:
        row = rows[change["log_lrsn"] + change["log_rba"]]
        if change["change_type"] == "CO":
            words = " ".join(change["text"].split()[:2])
            assert row.change_kind == STATEMENT_KINDS[words]
        else:
            assert row.change_kind == LOGMASTER_KINDS[change["change_type"]]
        assert row.source_change_type == change["change_type"]
        assert (row.table_schema, row.table_name) == (change["table_owner"], change["table_name"])
        assert row.sql_text == change["text"]
        assert row.details == ("REUSE STORAGE" if change["change_type"] == "DR" else None)
        if change["change_type"] == "E":
            assert row.object_name == f"{change['clone_owner']}.{change['clone_name']}"
        assert row.transaction_id.split("-M")[0] == change["uorid"]
        outcome = {"C": "committed", "A": "aborted"}.get(change["uor_disposition"], "in_flight")
        assert row.transaction_disposition == outcome
        committed = outcome == "committed"
        assert row.commit_position == (change["commit_lrsn"] if committed else None)


def test_db2luw_ddl_records(spark, demo):
    capture = generator_capture(demo.raw, "db2luw")
    summary = json.loads((demo.raw / "truth" / "db2luw" / "summary.json").read_text())
    expected = Counter()
    for kind, n in summary["record_kinds"].items():
        if kind in DB2LUW_KINDS:
            expected[DB2LUW_KINDS[kind]] += n
    rows = schema_changes(spark, "db2luw", capture)
    assert Counter(r.change_kind for r in rows) == expected
    assert expected["add_column"] == 1 and expected["truncate"] == 1
    # ALTER TABLE ACCOUNTS ADD COLUMN: the layouts before and after, from the truth's rows
    tables = json.loads((demo.raw / "truth" / "db2luw" / "tables.json").read_text())
    changes = truth_lines(demo.raw, "db2luw", "changes.jsonl")
    accounts = sorted(
        (c for c in changes if c["table"] == "SALES.ACCOUNTS"), key=lambda c: c["lsn"]
    )
    first_image = accounts[0]["after"] or accounts[0]["before"]
    (added,) = [r for r in rows if r.change_kind == "add_column"]
    assert (added.table_schema, added.table_name) == ("SALES", "ACCOUNTS")
    assert column_names(added.new_definition) == tables["SALES.ACCOUNTS"]["columns"]
    assert set(column_names(added.old_definition)) == set(first_image)
    assert len(column_names(added.old_definition)) < len(column_names(added.new_definition))
    # the tables created in the capture and there at its end: columns on the initialize-table
    # record (the third, LOADS, was dropped: named by its ids and drop LSN)
    initialized = {r.table_name: r for r in rows if r.change_kind == "initialize_table"}
    assert len(initialized) == 3
    for name in ("EVENTS", "AUDIT"):
        assert column_names(initialized[name].new_definition) == tables[f"SALES.{name}"]["columns"]
        assert initialized[name].old_definition is None
    # LOADS: a DROP TABLE rolled back, then one committed
    drops = sorted((r.log_position, r.transaction_disposition, r.table_name)
                   for r in rows if r.change_kind == "drop_table")  # fmt: skip
    assert [d[1] for d in drops] == ["aborted", "committed"]
    loads = {n for n in initialized if n.startswith("TBSPACEID=2,TABLEID=15,DROPPED_LSN=")}
    assert {d[2] for d in drops} == loads and len(loads) == 1
    (truncated,) = [c for c in changes if c["operation"] == "truncate"]
    (truncate,) = [r for r in rows if r.change_kind == "truncate"]
    assert f"{truncate.table_schema}.{truncate.table_name}" == truncated["table"]
    assert int(truncate.log_position, 16) == truncated["lsn"]
    # ALTER TABLE SHIPMENTS ADD PARTITION: the record on the new partition's ids is named as
    # the table (interpretation 21), with the statement the log carries before it
    (added_partition,) = [r for r in rows if r.change_kind == "partition_state"]
    assert (added_partition.table_schema, added_partition.table_name) == ("SALES", "SHIPMENTS")
    assert added_partition.details == "partition 2: add_partition"
    assert added_partition.sql_text.startswith("ALTER TABLE SALES.SHIPMENTS ADD PARTITION P2026")
    for row in rows:
        if row.transaction_disposition != "aborted":
            assert row.transaction_disposition == "committed" and row.commit_position is not None


def test_soliddb_ddl_statements(spark, demo):
    capture = generator_capture(demo.raw, "soliddb")
    truth = truth_lines(demo.raw, "soliddb", "schema_changes.jsonl")
    rows = {r.log_position: r for r in schema_changes(spark, "soliddb", capture)}
    assert len(rows) == len(truth)  # one row per statement, not per DDL and SQL record
    for event in truth:
        row = rows[event["logaddr"]]
        kind = SOLIDDB_LOGRECIDS[event["logrecid"]]
        if kind == "alter_table" and "ADD COLUMN" in event["sql_text"].upper():
            kind = "add_column"
        assert row.change_kind == kind, event
        assert row.sql_text == event["sql_text"]
        assert row.transaction_id == event["transaction_id"]
        if "table_name" in event:
            assert (row.table_schema, row.table_name) == (
                event["table_schema"],
                event["table_name"],
            )
        if kind == "rename_table" or kind in NOT_ABOUT_A_TABLE or "index" in kind:
            assert row.object_name == event["info"]
        if kind in NOT_ABOUT_A_TABLE:
            assert row.table_name is None
    kinds = Counter(r.change_kind for r in rows.values())
    assert kinds["create_table"] >= 2 and kinds["add_column"] == 1 and kinds["drop_table"] == 1


def test_truncates_are_in_both_marts(spark, demo):
    rows = spark.sql(
        "select s.source_system, c.operation from marts.fct_schema_changes as s "
        "left join marts.fct_changes as c on s.schema_change_id = c.change_id "
        "where s.change_kind = 'truncate'"
    ).collect()
    assert {r.source_system for r in rows} == {"db2zos", "db2luw", "soliddb"}
    assert {r.operation for r in rows} == {"truncate"}


def test_every_schema_change_transaction_is_a_transaction(spark, demo):
    """A transaction that changed no row (a CREATE TABLE and its initialize-table record) is a
    row of fct_transactions too, with its DDL counted; no schema change points at nothing."""
    per_transaction = spark.sql(
        "select s.source_system, s.log_stream, s.transaction_id, count(*) as n, "
        "max(s.transaction_disposition) as disposition, "
        "max(t.schema_change_count) as schema_change_count, max(t.change_count) as changes, "
        "max(t.disposition) as transaction_disposition, count(t.transaction_id) as found "
        "from marts.fct_schema_changes as s left join marts.fct_transactions as t "
        "on s.source_system = t.source_system and s.log_stream = t.log_stream "
        "and s.transaction_id = t.transaction_id "
        "where s.transaction_id is not null "
        "group by s.source_system, s.log_stream, s.transaction_id"
    ).collect()
    assert per_transaction
    assert [r for r in per_transaction if r.found != r.n] == []
    assert [r for r in per_transaction if r.schema_change_count != r.n] == []
    assert [r for r in per_transaction if r.transaction_disposition != r.disposition] == []
    ddl_only = {r.source_system for r in per_transaction if r.changes == 0}
    assert ddl_only == {"db2zos", "db2luw", "soliddb"}


# --- schema as of any position ---------------------------------------------------------------


def versions_at_changes(spark, source: str, capture: str) -> list:
    """Each change of the capture with the dim_table_versions version(s) in force at its
    log_position, found by the rule dim_table_versions.yml documents."""
    return spark.sql(
        "select c.transaction_id, c.change_seq, c.log_position, c.table_name, "
        "v.version_number, transform(v.columns, x -> x.column_name) as version_columns "
        "from marts.fct_changes as c left join marts.dim_table_versions as v "
        "on c.source_system = v.source_system and c.capture = v.capture "
        "and c.table_schema <=> v.table_schema and c.table_name = v.table_name "
        "and (v.valid_from_position is null or v.valid_from_position <= c.log_position) "
        "and (v.valid_to_position is null or c.log_position < v.valid_to_position) "
        f"where c.source_system = '{source}' and c.capture = '{capture}'"
    ).collect()


def test_db2luw_version_at_each_change_is_the_generators_layout(spark, demo):
    capture = generator_capture(demo.raw, "db2luw")
    truth: dict[tuple[int, str], set] = {}
    for change in truth_lines(demo.raw, "db2luw", "changes.jsonl"):
        if change["operation"] != "truncate":
            image = change["after"] or change["before"]
            truth[(change["lsn"], change["table"].split(".", 1)[1])] = set(image)
    found = versions_at_changes(spark, "db2luw", capture)
    checked, accounts_versions = 0, set()
    for row in found:
        key = (int(row.log_position.split(".")[0], 16), row.table_name)
        assert row.version_number is not None, row
        if key in truth:
            assert set(row.version_columns) == truth[key], row
            checked += 1
        if row.table_name == "ACCOUNTS":
            accounts_versions.add(row.version_number)
    assert len(found) == len({(r.transaction_id, r.change_seq) for r in found})  # one version each
    assert checked >= 0.9 * len(truth)
    assert accounts_versions == {1, 2}  # before and after ALTER TABLE ACCOUNTS ADD COLUMN


def test_soliddb_version_at_each_change_is_the_generators_layout(spark, demo):
    capture = generator_capture(demo.raw, "soliddb")
    truth = {
        (c["transaction_id"], c["change_seq"]): (
            c["table_name"],
            c["after_image"] or c["before_image"],
        )
        for c in truth_lines(demo.raw, "soliddb", "changes.jsonl")
    }
    found = versions_at_changes(spark, "soliddb", capture)
    assert len(found) == len({(r.transaction_id, r.change_seq) for r in found})  # one version each
    used = Counter()
    for row in found:
        assert row.version_number is not None, row
        table, image = truth[(row.transaction_id, row.change_seq)]
        assert row.table_name == table
        if image is not None:
            assert set(row.version_columns) == set(image), row
        used[(row.table_name, row.version_number)] += 1
    # rows before and after ALTER TABLE Inventory ADD COLUMN; SCRATCH before and after RENAME
    assert used[("Inventory", 1)] and used[("Inventory", 2)]
    assert used[("SCRATCH", 1)] and used[("SCRATCH_OLD", 2)]
