"""`op` / `_change_type` in fct_changes, and `logmart export debezium` envelopes.

Each line is a Kafka record {key, value}; the value is Debezium's change event value (JSON
converter without schemas):
before/after/source/op/ts_ms/transaction, op c (before null), u (both), d (after null),
t (neither); source with version, connector, name, ts_ms, snapshot, db, schema, table;
transaction with id, total_order and data_collection_order. The key holds the key columns;
the transaction topic BEGIN/END events. Without Spark: tests/marts/test_debezium_stream.py.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from tests.marts.oracle import generator_capture
from tests.replay import as_multiset, truth_tables
from udfs import cli
from udfs.debezium import CHECKPOINT_FILE, topic, transaction_topic, value
from udfs.sources import REGISTERED
from udfs.unavailable import DEBEZIUM_PLACEHOLDER

pytestmark = pytest.mark.spark

ENVELOPE_KEYS = {"before", "after", "source", "op", "ts_ms", "transaction"}
SOURCE_KEYS = {"version", "connector", "name", "ts_ms", "snapshot", "db", "schema", "table"}
IMAGES_BY_OP = {"c": (False, True), "u": (True, True), "d": (True, False), "t": (False, False)}


def test_op_and_change_type_name_every_change(spark, demo):
    combos = {
        tuple(r)
        for r in spark.sql(
            "select distinct operation, op, _change_type from marts.fct_changes"
        ).collect()
    }
    expected = {
        ("insert", "c", "insert"),
        ("update", "u", "update_postimage"),
        ("delete", "d", "delete"),
        ("truncate", "t", "truncate"),
    }
    assert expected <= combos
    assert combos <= expected | {("update", "u", "update_preimage")}


def test_commit_positions_have_the_digits_each_source_declares(spark, demo):
    # `--from-position` is checked against the declaration (check_position): the marts must agree
    widths = {
        r.source_system: (r.shortest, r.longest, r.not_hex)
        for r in spark.sql(
            "select source_system, min(length(commit_position)) as shortest, "
            "max(length(commit_position)) as longest, "
            "count_if(commit_position not rlike '^[0-9A-F]+$') as not_hex "
            "from marts.fct_changes where commit_position is not null group by source_system"
        ).collect()
    }
    assert set(widths) == {source.system for source in REGISTERED}
    for source in REGISTERED:
        digits = source.commit_position_digits
        assert widths[source.system] == (digits, digits, 0), source.system


def test_export_writes_debezium_envelopes_per_table(spark, demo, tmp_path, capsys):
    out = tmp_path / "debezium"
    capture = generator_capture(demo.raw, "db2zos")  # a capture of its own: its own stream
    code = cli.main(
        ["export", "debezium", "--out", str(out), "--source", "db2zos", "--stream", capture,
         "--warehouse", str(demo.warehouse)]
    )  # fmt: skip
    printed, err = capsys.readouterr()
    assert code == 0, err
    changes = spark.sql(
        "select change_id, table_schema, table_name, op, transaction_id, commit_position, "
        "key_columns from marts.fct_changes "
        f"where source_system = 'db2zos' and log_stream = '{capture}' "
        "and disposition = 'committed'"
    ).collect()
    tables = {(c.table_schema, c.table_name) for c in changes}
    files = sorted(out.glob("*.jsonl"))
    assert sorted(f.name for f in files) == sorted(
        [f"{topic('db2zos', capture, s, t)}.jsonl" for s, t in tables]
        + [f"{transaction_topic('db2zos', capture)}.jsonl"]
    )
    assert all(f.name in printed for f in files)
    assert (out / CHECKPOINT_FILE).exists()
    transaction_file = out / f"{transaction_topic('db2zos', capture)}.jsonl"
    files.remove(transaction_file)

    events: dict[str, list] = defaultdict(list)
    by_transaction: dict[str, list] = defaultdict(list)
    key_columns = {c.change_id: c.key_columns for c in changes}
    for file in files:
        records = [json.loads(line) for line in file.read_text("utf-8").splitlines()]
        assert all(set(r) == {"key", "value"} for r in records)  # a Kafka record per line
        lines = [r["value"] for r in records]  # no tombstones unless asked for
        commit_order = [(e["source"]["commit_lsn"], e["transaction"]["total_order"]) for e in lines]
        assert commit_order == sorted(commit_order), file.name  # commit order in each file
        for record, event in zip(records, lines, strict=True):
            assert set(event) == ENVELOPE_KEYS
            assert SOURCE_KEYS <= set(event["source"])
            assert event["source"]["connector"] == "db2zos" and event["source"]["db"] == capture
            assert isinstance(event["ts_ms"], int) and isinstance(event["source"]["ts_ms"], int)
            has_before, has_after = IMAGES_BY_OP[event["op"]]
            assert (event["before"] is not None, event["after"] is not None) == (
                has_before,
                has_after,
            )
            assert set(event["transaction"]) == {"id", "total_order", "data_collection_order"}
            keys = key_columns[event["source"]["change_id"]]
            image = event["after"] if event["op"] in ("c", "u") else event["before"]
            if event["op"] == "t" or not keys:
                assert record["key"] is None
            else:
                assert record["key"] == {k: image[k] for k in keys}
            events[event["source"]["change_id"]].append(event)
            by_transaction[event["transaction"]["id"]].append(event)
    assert set(events) == {c.change_id for c in changes}
    for change in changes:
        found = events[change.change_id]
        # an update of the key is a delete and a create, as Debezium's connectors write it
        assert [e["op"] for e in found] in ([change.op], ["d", "c"] if change.op == "u" else [])
        for event in found:
            assert event["source"]["schema"] == change.table_schema
            assert event["source"]["table"] == change.table_name
            assert event["source"]["commit_lsn"] == change.commit_position
            assert event["transaction"]["id"] == change.transaction_id
    for transaction_events in by_transaction.values():
        orders = sorted(e["transaction"]["total_order"] for e in transaction_events)
        assert orders == list(range(1, len(orders) + 1))
        per_table = defaultdict(list)
        for e in transaction_events:
            per_table[e["source"]["table"]].append(e["transaction"]["data_collection_order"])
        assert all(sorted(o) == list(range(1, len(o) + 1)) for o in per_table.values())

    # the transaction topic: BEGIN, END per transaction, in commit order, counts that add up
    boundaries = [json.loads(line) for line in transaction_file.read_text("utf-8").splitlines()]
    assert [b["value"]["status"] for b in boundaries] == ["BEGIN", "END"] * len(by_transaction)
    for begin, end in zip(boundaries[::2], boundaries[1::2], strict=True):
        assert begin["key"] == end["key"] == {"id": end["value"]["id"]}
        found = by_transaction[end["value"]["id"]]
        assert end["value"]["event_count"] == len(found)
        assert sum(d["event_count"] for d in end["value"]["data_collections"]) == len(found)

    # replaying each table's envelopes gives the generator's rows (typed values back to text);
    # a value the log does not carry is Debezium's placeholder in both (issue 14 item 9)
    expected = truth_tables(demo.raw, "db2zos")
    truth = json.loads((demo.raw / "truth" / "db2zos" / "tables.json").read_text())
    for name, table in truth.items():
        reasons = table.get("unavailable") or [{}] * len(table["rows"])
        expected[name] = [
            {k: DEBEZIUM_PLACEHOLDER if k in (why or {}) else v for k, v in row.items()}
            for row, why in zip(table["rows"], reasons, strict=True)
        ]
    for file in files:
        rows: list[dict] = []
        for line in file.read_text("utf-8").splitlines():
            event = json.loads(line)["value"]
            before = as_text(event["before"])
            if event["op"] == "t":
                rows.clear()
            if event["op"] in ("u", "d"):
                rows.remove(before)
            if event["op"] in ("c", "u"):
                rows.append(as_text(event["after"]))
        name = f"{event['source']['schema']}.{event['source']['table']}"
        assert as_multiset(rows) == as_multiset(expected.get(name, [])), name

    # a second run finds nothing new: nothing written, the checkpoint kept
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code = cli.main(
        ["export", "debezium", "--out", str(out), "--source", "db2zos", "--stream", capture,
         "--warehouse", str(demo.warehouse)]
    )  # fmt: skip
    assert code == 0 and "nothing new" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def as_text(image: dict | None) -> dict | None:
    if image is None:
        return None
    return {k: v if v is None or isinstance(v, str) else json.dumps(v) for k, v in image.items()}


def test_values_are_typed_as_debezium_gives_them():
    assert value("42", "INTEGER") == 42 and value("-7", "SMALLINT") == -7
    assert value("0.5", "DOUBLE") == 0.5 and value("NaN", "REAL") == "NaN"
    assert value("12.50", "DECIMAL(5,2)") == "12.50"  # decimal.handling.mode=string
    assert value("00FF", "CHAR(2) FOR BIT DATA") == "00FF"  # binary.handling.mode=hex
    assert value("true", "BOOLEAN") is True
    assert value("42", None) == "42" and value(None, "INTEGER") is None
    assert topic("db2zos", "LOGM.X1", "A B", "T/1") == "db2zos.LOGM.X1.A_B.T_1"
