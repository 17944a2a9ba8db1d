"""`logmart export debezium` without Spark: hand-made fct_changes rows → Debezium messages,
the checkpoint, incremental runs, time zones.

Shapes checked against Debezium's documentation: a change event value has before, after,
source, op (c/u/d/t), ts_ms and transaction {id, total_order, data_collection_order}, the
message key holds the key columns, a tombstone is the key with a null value
(tombstones.on.delete), a truncate has neither image nor key, and the transaction topic
<prefix>.transaction holds {status BEGIN|END, id, ts_ms, event_count, data_collections
[{data_collection, event_count}]} ("Transaction metadata").
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row

from udfs import cli
from udfs.debezium import (
    CHECKPOINT_FILE,
    Options,
    Selection,
    StreamCheckpoint,
    TopicFiles,
    check_position,
    epoch_ms,
    export,
    read_checkpoint,
    source_time_zone,
    stream_messages,
    time_zone,
    time_zone_flag,
    time_zone_variable,
    topic,
    transaction_topic,
    value,
    wall_clock_systems,
    wall_clock_time_zones,
    write_checkpoint,
    write_stream,
)
from udfs.errors import LogmartError

EXPORTED = 1_700_000_000_000
TYPES = {"ID": "INTEGER", "NAME": "VARCHAR(20)", "PRICE": "DECIMAL(5,2)"}


def change(
    txn: str,
    seq: int,
    op: str,
    before: dict | None = None,
    after: dict | None = None,
    *,
    position: str,
    table: str = "T",
    keys: tuple[str, ...] = ("ID",),
    capture: str = "DB2P/E1",
    stream: str = "DB2P",
    source: str = "db2zos",
    commit_ts: str | None = "2024-03-18 09:30:00",
) -> dict[str, Any]:
    """A committed fct_changes row as the export query selects it."""
    return {
        "source_system": source, "log_stream": stream, "capture": capture,
        "table_schema": "S", "table_name": table, "op": op,
        "change_id": f"{source}:{capture}/F:{txn}:{seq}", "transaction_id": txn,
        "change_seq": seq, "commit_position": position, "log_position": f"{position}{seq:04d}",
        "commit_ts": commit_ts, "before_image": before, "after_image": after,
        "key_columns": list(keys), "column_types": TYPES,
    }  # fmt: skip


P1, P2, P3 = "00000000000000000100", "00000000000000000200", "00000000000000000300"


def workload() -> list[dict[str, Any]]:
    """Three transactions; the second spans two captures and two tables."""
    return [
        change("A", 1, "c", None, {"ID": "1", "NAME": "x", "PRICE": "1.50"}, position=P1),
        change("A", 2, "c", None, {"ID": "2", "NAME": "y", "PRICE": "2.00"}, position=P1),
        change("B", 1, "u", {"ID": "1", "NAME": "x", "PRICE": "1.50"},
               {"ID": "1", "NAME": "z", "PRICE": "1.50"}, position=P2),
        change("B", 2, "c", None, {"ID": "9"}, position=P2, table="U", capture="DB2P/E2"),
        change("B", 3, "d", {"ID": "2", "NAME": "y", "PRICE": "2.00"}, None, position=P2,
               capture="DB2P/E2"),
        change("C", 1, "t", position=P3, table="U", capture="DB2P/E2"),
    ]  # fmt: skip


def messages(rows, options: Options | None = None, start: StreamCheckpoint | None = None):
    progress = start or StreamCheckpoint("db2zos", "DB2P")
    found = list(stream_messages(rows, progress, options or Options(exported_ms=EXPORTED)))
    return found, progress


def data_events(found) -> list:
    return [m for m in found if m.value is not None and "op" in m.value]


# ---------------------------------------------------------------------------------------------
# Envelopes, keys, transactions


def test_each_change_is_a_debezium_envelope_with_its_key():
    found, _ = messages(workload())
    events = data_events(found)
    assert [e.value["op"] for e in events] == ["c", "c", "u", "c", "d", "t"]
    images = {"c": (False, True), "u": (True, True), "d": (True, False), "t": (False, False)}
    for event in events:
        value = event.value
        assert set(value) == {"before", "after", "source", "op", "ts_ms", "transaction"}
        assert (value["before"] is not None, value["after"] is not None) == images[value["op"]]
        assert value["ts_ms"] == EXPORTED
        source = value["source"]
        assert {"version", "connector", "name", "ts_ms", "snapshot", "db", "schema", "table",
                "change_lsn", "commit_lsn", "txId"} <= set(source)  # fmt: skip
        assert source["connector"] == "db2zos" and source["name"] == "db2zos.DB2P"
        assert source["db"] == "DB2P" and source["schema"] == "S"
        assert set(value["transaction"]) == {"id", "total_order", "data_collection_order"}
    first, update, _, delete, truncate = events[0], events[2], events[3], events[4], events[5]
    assert first.topic == "db2zos.DB2P.S.T" and truncate.topic == "db2zos.DB2P.S.U"
    assert first.value["after"] == {"ID": 1, "NAME": "x", "PRICE": "1.50"}  # typed by column
    assert first.key == {"ID": 1}
    assert update.key == {"ID": 1} and update.value["before"]["NAME"] == "x"
    assert delete.key == {"ID": 2} and delete.value["before"]["ID"] == 2
    assert truncate.key is None  # a truncate concerns the whole table: no key
    assert events[3].value["source"]["capture"] == "DB2P/E2"
    assert first.value["source"]["commit_lsn"] == P1 and first.value["source"]["txId"] == "A"


def test_a_table_without_key_columns_has_null_keys():
    rows = [change("A", 1, "c", None, {"ID": "1"}, position=P1, keys=())]
    found, _ = messages(rows)
    assert data_events(found)[0].key is None


def test_transactions_are_framed_by_begin_and_end_on_the_transaction_topic():
    found, progress = messages(workload())
    on_topic = [m for m in found if m.topic == "db2zos.DB2P.transaction"]
    assert transaction_topic("db2zos", "DB2P") == "db2zos.DB2P.transaction"
    assert [(m.value["status"], m.value["id"]) for m in on_topic] == [
        ("BEGIN", "A"), ("END", "A"), ("BEGIN", "B"), ("END", "B"), ("BEGIN", "C"), ("END", "C"),
    ]  # fmt: skip
    assert all(m.key == {"id": m.value["id"]} for m in on_topic)
    begin = on_topic[2].value
    assert begin == {"status": "BEGIN", "id": "B", "ts_ms": epoch_ms("2024-03-18 09:30:00"),
                     "event_count": None, "data_collections": None}  # fmt: skip
    end = on_topic[3].value
    assert end["event_count"] == 3
    assert end["data_collections"] == [
        {"data_collection": "S.T", "event_count": 2},
        {"data_collection": "S.U", "event_count": 1},
    ]
    # every message of B lies between its BEGIN and END
    kinds = [(m.value or {}).get("status") or m.value["transaction"]["id"] for m in found]
    assert kinds == ["BEGIN", "A", "A", "END", "BEGIN", "B", "B", "B", "END", "BEGIN", "C", "END"]
    assert (progress.commit_position, progress.transaction_id) == (P3, "C")
    assert (progress.transactions, progress.changes, progress.messages) == (3, 6, 12)


def test_orders_count_within_the_transaction_across_its_captures():
    found, _ = messages(workload())
    orders = [
        (e.value["transaction"]["id"], e.value["transaction"]["total_order"],
         e.value["transaction"]["data_collection_order"])
        for e in data_events(found)
    ]  # fmt: skip
    # B: T (capture E1), U (E2), T (E2): one numbering for the whole transaction
    assert orders == [("A", 1, 1), ("A", 2, 2), ("B", 1, 1), ("B", 2, 1), ("B", 3, 2), ("C", 1, 1)]


def test_tombstones_follow_deletes_with_a_key_when_asked():
    keyless = change("D", 1, "d", {"ID": "7"}, None, position="00000000000000000400", keys=())
    rows = [*workload(), keyless]
    found, _ = messages(rows)
    assert all(m.value is not None for m in found)  # none by default
    found, progress = messages(rows, Options(tombstones=True, exported_ms=EXPORTED))
    index = next(i for i, m in enumerate(found) if (m.value or {}).get("op") == "d")
    tombstone = found[index + 1]
    assert (tombstone.topic, tombstone.key, tombstone.value) == ("db2zos.DB2P.S.T", {"ID": 2}, None)
    assert sum(m.value is None for m in found) == 1  # the keyless table's delete has none
    end_b = next(m for m in found if m.value and m.value.get("status") == "END" and
                 m.value["id"] == "B")  # fmt: skip
    assert end_b.value["event_count"] == 3  # a tombstone is not an event
    assert progress.messages == len(found)


def test_truncates_can_be_left_out():
    found, progress = messages(workload(), Options(truncates="skip", exported_ms=EXPORTED))
    assert "t" not in {e.value["op"] for e in data_events(found)}
    end_c = found[-1].value
    assert (end_c["status"], end_c["event_count"], end_c["data_collections"]) == ("END", 0, [])
    assert progress.changes == 6  # the truncate is exported as far as the checkpoint goes


def test_an_update_of_the_key_is_a_delete_and_a_create():
    rows = [change("A", 1, "u", {"ID": "1", "NAME": "a"}, {"ID": "5", "NAME": "a"}, position=P1)]
    found, _ = messages(rows, Options(tombstones=True, exported_ms=EXPORTED))
    body = [(m.key, m.value and m.value["op"]) for m in found[1:-1]]
    assert body == [({"ID": 1}, "d"), ({"ID": 1}, None), ({"ID": 5}, "c")]
    assert found[1].value["before"] == {"ID": 1, "NAME": "a"} and found[1].value["after"] is None
    assert found[3].value["before"] is None and found[3].value["after"]["ID"] == 5
    assert [m.value["transaction"]["total_order"] for m in (found[1], found[3])] == [1, 2]
    assert found[-1].value["event_count"] == 2


def test_rows_already_exported_or_out_of_commit_order_are_refused():
    start = StreamCheckpoint("db2zos", "DB2P", commit_position=P2, transaction_id="B")
    with pytest.raises(ValueError, match="not in commit order or were exported already"):
        messages(workload(), start=start)
    rows = workload()
    with pytest.raises(ValueError, match="not in commit order"):
        messages([rows[2], rows[0]])
    with pytest.raises(ValueError, match="among those of db2zos/DB2P"):
        messages([change("A", 1, "c", None, {"ID": "1"}, position=P1, stream="OTHER")])


def test_topic_names():
    assert topic("db2zos", "LOGM.X1", "A B", "T/1") == "db2zos.LOGM.X1.A_B.T_1"
    assert topic("soliddb", "", None, "T") == "soliddb.T"  # stream-less, schema-less


def test_images_as_spark_map_entries_are_read_like_dicts():
    entries = [Row(key="ID", value="4"), Row(key="NAME", value=None)]
    row = change("A", 1, "c", None, None, position=P1) | {"after_image": entries}
    found, _ = messages([row])
    assert found[1].value["after"] == {"ID": 4, "NAME": None} and found[1].key == {"ID": 4}


def test_a_float_column_holding_text_stays_text():
    assert value("abc", "FLOAT") == "abc" and value("1e3", "DOUBLE") == 1000.0


# ---------------------------------------------------------------------------------------------
# Time zones: source.ts_ms is UTC milliseconds


def test_commit_times_are_read_in_the_source_time_zone():
    zones = {"db2zos": "Europe/Berlin", "db2luw": "Europe/Berlin"}
    assert source_time_zone("db2luw", zones) == "UTC"  # the log's epoch seconds, UTC
    assert source_time_zone("db2zos", zones) == "Europe/Berlin"  # the setting
    assert source_time_zone("db2zos") == "UTC"  # no setting
    assert epoch_ms("1970-01-01 00:00:01.5") == 1500
    utc = epoch_ms("2024-03-18 09:30:00")
    assert epoch_ms("2024-03-18 09:30:00", time_zone("Europe/Berlin")) == utc - 3600_000  # CET
    assert epoch_ms("2024-07-18 09:30:00", time_zone("Europe/Berlin")) == (
        epoch_ms("2024-07-18 07:30:00")
    )  # CEST
    assert epoch_ms("2024-03-18 09:30:00", time_zone("-0500")) == utc + 5 * 3600_000
    assert epoch_ms(None) is None
    rows = [change("A", 1, "c", None, {"ID": "1"}, position=P1)]
    found, _ = messages(rows, Options(time_zone="+01:00", exported_ms=EXPORTED))
    assert found[1].value["source"]["ts_ms"] == utc - 3600_000 == found[0].value["ts_ms"]
    rows = [change("A", 1, "c", None, {"ID": "1"}, position=P1, commit_ts=None)]
    assert messages(rows)[0][1].value["source"]["ts_ms"] is None  # solidDB logs no times


def test_each_wall_clock_source_has_a_time_zone_setting(monkeypatch):
    # the sources whose logs give times with no zone, from their declarations: Log Master's
    assert wall_clock_systems() == ["db2zos"]
    assert (time_zone_flag("db2zos"), time_zone_variable("db2zos")) == (
        "--db2zos-time-zone", "LOGMART_DB2ZOS_TIME_ZONE",
    )  # fmt: skip
    assert wall_clock_time_zones(environ={}) == {"db2zos": "UTC"}
    environ = {"LOGMART_DB2ZOS_TIME_ZONE": "America/New_York"}
    assert wall_clock_time_zones(environ=environ) == {"db2zos": "America/New_York"}
    given = {"db2zos": "Europe/Berlin"}  # the flag wins
    assert wall_clock_time_zones(given, environ) == {"db2zos": "Europe/Berlin"}
    monkeypatch.setenv("LOGMART_DB2ZOS_TIME_ZONE", "Asia/Tokyo")  # os.environ by default
    assert wall_clock_time_zones() == {"db2zos": "Asia/Tokyo"}
    with pytest.raises(LogmartError, match=r"unknown time zone 'Mars/Base'.*Europe/Berlin"):
        wall_clock_time_zones({"db2zos": "Mars/Base"})
    with pytest.raises(LogmartError, match="not less than 24 hours"):
        time_zone("+25:00")


def test_every_wall_clock_source_has_its_flag_on_the_export(capsys):
    with pytest.raises(SystemExit):
        cli.main(["export", "debezium", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse folds the help's lines
    for system in wall_clock_systems():
        assert time_zone_flag(system) in text and time_zone_variable(system) in text


def test_a_bad_time_zone_fails_before_spark_starts(capsys):
    code = cli.main(["export", "debezium", "--out", "x", "--db2zos-time-zone", "Mars/Base"])
    assert code == 2
    assert "unknown time zone 'Mars/Base'" in capsys.readouterr().err


def test_stream_and_capture_are_one_choice(capsys):
    with pytest.raises(SystemExit):
        cli.main(["export", "debezium", "--out", "x", "--stream", "A", "--capture", "B/c"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert Selection(capture="DB2P/E2").stream() == "DB2P"
    assert Selection(capture="E1").stream() == "E1"
    with pytest.raises(LogmartError, match="part of stream 'B', not 'A'"):
        Selection(log_stream="A", capture="B/c").stream()


def test_positions_are_checked():
    assert check_position("00deCFC4922F6A000000", "db2zos") == "00DECFC4922F6A000000"
    with pytest.raises(LogmartError, match="not hexadecimal"):
        check_position("12-34", None)
    with pytest.raises(LogmartError, match="has 4 hex digits; db2luw commit positions have 32"):
        check_position("ABCD", "db2luw")


# ---------------------------------------------------------------------------------------------
# Checkpoint and files


def test_the_checkpoint_round_trips_and_refuses_what_it_cannot_read(tmp_path):
    entry = StreamCheckpoint("db2zos", "DB2P", P2, "B", 2, 5, 10, {"x.jsonl": 7}, {"a": 1}, "t")
    write_checkpoint(tmp_path, {entry.key: entry})
    assert read_checkpoint(tmp_path) == {"db2zos/DB2P": entry}
    data = json.loads((tmp_path / CHECKPOINT_FILE).read_text())
    assert (data["format"], data["version"]) == ("logmart-debezium-checkpoint", 1)
    data["version"] = 99
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps(data))
    with pytest.raises(LogmartError, match="version 99; this logmart reads version 1"):
        read_checkpoint(tmp_path)
    (tmp_path / CHECKPOINT_FILE).write_text("{")
    with pytest.raises(LogmartError, match="cannot read the checkpoint"):
        read_checkpoint(tmp_path)
    assert read_checkpoint(tmp_path / "none") == {}


def test_what_an_interrupted_run_appended_is_cut_back(tmp_path):
    (tmp_path / "a.jsonl").write_text("kept\npartial")
    (tmp_path / "b.jsonl").write_text("not in the checkpoint\n")
    files = TopicFiles(tmp_path, {"a.jsonl": 5})
    assert (tmp_path / "a.jsonl").read_text() == "kept\n"
    from udfs.debezium import Message

    files.write(Message("b", None, {"x": 1}))
    assert files.close() == {"a.jsonl": 5, "b.jsonl": len('{"key": null, "value": {"x": 1}}\n')}
    assert (tmp_path / "b.jsonl").read_text() == '{"key": null, "value": {"x": 1}}\n'
    with pytest.raises(LogmartError, match="less than the 50 the checkpoint recorded"):
        TopicFiles(tmp_path, {"a.jsonl": 50})
    with pytest.raises(LogmartError, match="is gone"):
        TopicFiles(tmp_path, {"c.jsonl": 3})


def test_write_stream_appends_and_a_run_with_nothing_new_changes_nothing(tmp_path):
    options = Options(exported_ms=EXPORTED)
    start = StreamCheckpoint("db2zos", "DB2P")
    done, written = write_stream(tmp_path, workload()[:2], start, options)
    assert [(w.path.name, w.events) for w in written] == [
        ("db2zos.DB2P.S.T.jsonl", 2), ("db2zos.DB2P.transaction.jsonl", 2),
    ]  # fmt: skip
    assert done.files == {p.name: p.stat().st_size for p in tmp_path.glob("*.jsonl")}
    assert done.options == options.recorded() and start.commit_position is None
    again, written = write_stream(tmp_path, [], done, options)
    assert written == [] and again is done


# ---------------------------------------------------------------------------------------------
# The export's runs, on a stand-in for Spark that answers the export's three queries


class FakeSpark:
    """Answers the queries of udfs.debezium over hand-made rows, as marts.fct_changes would."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def sql(self, query: str) -> FakeSpark._Result:
        def value(column: str, operator: str = "=") -> str | None:
            found = re.search(rf"{column} {re.escape(operator)} '([^']*)'", query)
            return found.group(1) if found else None

        rows = [r for r in self.rows if r["commit_position"] is not None]
        for column in ("source_system", "log_stream"):
            wanted = value(column)
            rows = [r for r in rows if wanted is None or r[column] == wanted]
        after, upto = value("commit_position", ">"), value("commit_position", "<=")
        rows = [r for r in rows if after is None or r["commit_position"] > after]
        rows = [r for r in rows if upto is None or r["commit_position"] <= upto]
        if query.lstrip().startswith("select distinct"):
            pairs = sorted({(r["source_system"], r["log_stream"]) for r in rows})
            return self._Result([Row(source_system=s, log_stream=t) for s, t in pairs])
        if "count(*)" in query:
            return self._Result([Row(changes=len(rows))])
        rows.sort(key=lambda r: (r["commit_position"], r["transaction_id"], r["change_seq"]))
        return self._Result([Row(**r) for r in rows])

    class _Result:
        def __init__(self, rows: list) -> None:
            self.rows = rows

        def collect(self) -> list:
            return self.rows

        def toLocalIterator(self) -> Any:  # Spark's name
            return iter(self.rows)


def read_out(folder: Path) -> dict[str, list[dict]]:
    """Every topic file's records, ts_ms of change events (the export time) left out."""
    found = {}
    for path in sorted(folder.glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        for record in records:
            if record["value"] and "op" in record["value"]:
                del record["value"]["ts_ms"]
        found[path.name] = records
    return found


def other_stream() -> list[dict[str, Any]]:
    return [
        change("X", 1, "c", None, {"ID": "1"}, position="0" * 31 + "5", source="db2luw",
               stream="SAMPLE", capture="SAMPLE/c1"),
    ]  # fmt: skip


def test_two_runs_equal_one_run_of_the_whole_stream(tmp_path):
    """Export after capture 1 and again after capture 2 arrived = one export of the whole
    stream: no change twice, none missing (B was open at the cut: its changes come with its
    commit in the second run)."""
    first_capture = [r for r in workload() if r["transaction_id"] == "A"] + other_stream()
    runs, once = tmp_path / "runs", tmp_path / "once"
    assert [w.path.name for w in export(FakeSpark(first_capture), runs)] == [
        "db2luw.SAMPLE.S.T.jsonl", "db2luw.SAMPLE.transaction.jsonl",
        "db2zos.DB2P.S.T.jsonl", "db2zos.DB2P.transaction.jsonl",
    ]  # fmt: skip
    after_first = (runs / CHECKPOINT_FILE).read_text()
    assert read_checkpoint(runs)["db2zos/DB2P"].commit_position == P1
    whole = workload() + other_stream()
    second = export(FakeSpark(whole), runs)
    assert {w.path.name: w.events for w in second} == {
        "db2zos.DB2P.S.T.jsonl": 2,
        "db2zos.DB2P.S.U.jsonl": 2,
        "db2zos.DB2P.transaction.jsonl": 4,
    }  # fmt: skip  (the db2luw stream had nothing new)
    assert (runs / CHECKPOINT_FILE).read_text() != after_first
    export(FakeSpark(whole), once)
    assert read_out(runs) == read_out(once)
    ids = [r["value"]["source"]["change_id"] for records in read_out(runs).values()
           for r in records if r["value"] and "op" in r["value"]]  # fmt: skip
    assert sorted(ids) == sorted(r["change_id"] for r in whole)  # each once
    checkpoint = read_checkpoint(runs)
    assert {k: (v.commit_position, v.transactions, v.changes) for k, v in checkpoint.items()} == {
        "db2zos/DB2P": (P3, 3, 6), "db2luw/SAMPLE": ("0" * 31 + "5", 1, 1),
    }  # fmt: skip
    assert {k: asdict(v) | {"exported_at": None} for k, v in checkpoint.items()} == {
        k: asdict(v) | {"exported_at": None} for k, v in read_checkpoint(once).items()
    }

    # nothing new: nothing written, the checkpoint kept as it was
    before = {p.name: p.read_bytes() for p in runs.iterdir()}
    assert export(FakeSpark(whole), runs) == []
    assert {p.name: p.read_bytes() for p in runs.iterdir()} == before


def test_a_selection_exports_its_stream_only(tmp_path):
    whole = workload() + other_stream()
    written = export(FakeSpark(whole), tmp_path, Selection(capture="SAMPLE/c9"))
    assert [w.path.name for w in written] == [
        "db2luw.SAMPLE.S.T.jsonl", "db2luw.SAMPLE.transaction.jsonl",
    ]  # fmt: skip
    assert set(read_checkpoint(tmp_path)) == {"db2luw/SAMPLE"}
    with pytest.raises(LogmartError, match=r"no committed changes .* stream 'NOPE'.*db2zos/DB2P"):
        export(FakeSpark(whole), tmp_path, Selection(log_stream="NOPE"))


def test_from_position_starts_after_it(tmp_path):
    whole = workload() + other_stream()
    selection = Selection("db2zos", "DB2P", from_position=P1.lower())
    export(FakeSpark(whole), tmp_path, selection)
    records = read_out(tmp_path)["db2zos.DB2P.transaction.jsonl"]
    assert [r["value"]["id"] for r in records if r["value"]["status"] == "END"] == ["B", "C"]
    assert read_checkpoint(tmp_path)["db2zos/DB2P"].changes == 6  # 2 before P1, 4 after
    # continuing from the same position is allowed; another one is not
    assert export(FakeSpark(whole), tmp_path, Selection("db2zos", "DB2P", from_position=P3)) == []
    with pytest.raises(LogmartError, match="holds the export of db2zos/DB2P up to commit posi"):
        export(FakeSpark(whole), tmp_path, Selection("db2zos", "DB2P", from_position=P2))
    with pytest.raises(LogmartError, match="needs one log stream, and 2 match"):
        export(FakeSpark(whole), tmp_path / "new", Selection(from_position=P1))
    with pytest.raises(LogmartError, match="db2zos commit positions have 20"):
        export(FakeSpark(whole), tmp_path / "new", Selection(log_stream="DB2P",
                                                             from_position="AB"))  # fmt: skip


def test_a_continuation_must_match_the_stream_and_the_options(tmp_path):
    rows = workload()[:2]
    export(FakeSpark(rows), tmp_path)
    with pytest.raises(LogmartError, match=r"written with .*'tombstones': False.*same options"):
        export(FakeSpark(workload()), tmp_path, tombstones=True)
    # a change committed before the checkpoint arrives later (a capture out of order)
    late = change("0", 1, "c", None, {"ID": "3"}, position="00000000000000000050")
    with pytest.raises(LogmartError, match=r"now has 3 committed changes .* but 2 were exported"):
        export(FakeSpark([late, *workload()]), tmp_path)
    with pytest.raises(LogmartError, match="truncates must be one of emit, skip"):
        export(FakeSpark(rows), tmp_path, truncates="drop")
