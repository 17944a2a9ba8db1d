"""Transactions and changes: incarnations, dispositions, CAPTURE_OFF, pairing, truncate, replay."""

from __future__ import annotations

import struct

from tests.soliddb.transactions import assemble, replay, same_row
from udfs.soliddb.catalog import Column, TableLayout
from udfs.soliddb.records import decode_capture

from .handmade import field, logaddr, row

T = TableLayout(
    10,
    "S",
    "T",
    (
        Column("ID", "INTEGER", nullable=False, position=1, key=1),
        Column("V", "VARCHAR", position=2),
    ),
)
U = TableLayout(11, "S", "U", (Column("K", "INTEGER", nullable=False, position=1, key=1),))


def image(key: int, value: str | None = None) -> bytes:
    return field(struct.pack(">i", key)) + field((value or "").encode())


class Log:
    """Builds SYS_LOG rows with increasing LOGADDRs."""

    def __init__(self) -> None:
        self.n = 0x100
        self.rows: list[dict] = []

    def add(self, recid: int | None, trxid: int | None, **kw) -> str:
        self.n += 0x10
        self.rows.append(row(recid, trxid, self.n, **kw))
        return logaddr(self.n).hex().upper()

    def start(self, trxid: int, capture_off: bool = False) -> str:
        return self.add(7, trxid, flags=64 if capture_off else 0)

    def commit(self, trxid: int) -> str:
        return self.add(12, trxid, flags=0)

    def insert(self, trxid: int, key: int, value: str, relid: int = 10) -> str:
        return self.add(
            1,
            trxid,
            relid=relid,
            data=image(key, value) if relid == 10 else field(struct.pack(">i", key)),
        )

    def delete(self, trxid: int, key: int, value: str) -> str:
        return self.add(4, trxid, relid=10, data=image(key, value))

    def update(self, trxid: int, key: int, before: str, after: str) -> tuple[str, str]:
        return (
            self.add(5, trxid, relid=10, data=image(key, before)),
            self.add(3, trxid, relid=10, data=image(key, after)),
        )

    def assemble(self, **kw) -> dict:
        decoded, _ = decode_capture(self.rows, [T, U])
        assert all(r["decode_error"] is None for r in decoded)
        return assemble(decoded, **kw)


def by_id(result: dict) -> dict:
    return {t["transaction_id"]: t for t in result["transactions"]}


def test_update_pairs_before_and_after_images():
    log = Log()
    log.start(1)
    log.insert(1, 1, "a")
    before_at, after_at = log.update(1, 1, "a", "b")
    commit = log.commit(1)
    changes = log.assemble()["changes"]
    assert [(c["operation"], c["change_seq"]) for c in changes] == [("insert", 1), ("update", 2)]
    update = changes[1]
    assert update["before_image"] == {"ID": "1", "V": "a"}
    assert update["after_image"] == {"ID": "1", "V": "b"}
    assert (
        update["pairing"],
        update["logaddr"],
        update["before_logaddr"],
        update["after_logaddr"],
    ) == ("paired", before_at, before_at, after_at)
    assert update["commit_position"] == commit
    assert update["disposition"] == "committed"
    assert (update["table_schema"], update["table_name"]) == ("S", "T")


def test_key_change_stays_delete_plus_insert():
    log = Log()
    log.start(1)
    log.delete(1, 1, "a")
    log.insert(1, 2, "a")
    log.commit(1)
    assert [c["operation"] for c in log.assemble()["changes"]] == ["delete", "insert"]


def test_unpaired_images():
    log = Log()
    log.start(1)
    log.add(5, 1, relid=10, data=image(1, "a"))  # before image, then an insert: not paired
    log.insert(1, 2, "x")
    log.add(3, 1, relid=10, data=image(3, "c"))  # after image with no before image
    log.add(5, 1, relid=10, data=image(4, "d"))  # before image at the end
    log.commit(1)
    changes = log.assemble()["changes"]
    assert [(c["operation"], c["pairing"]) for c in changes] == [
        ("update", "before_only"),
        ("insert", None),
        ("update", "after_only"),
        ("update", "before_only"),
    ]
    assert changes[0]["after_image"] is None and changes[2]["before_image"] is None


def test_pairs_by_relid_when_tables_interleave():
    log = Log()
    log.start(1)
    log.add(5, 1, relid=10, data=image(1, "a"))
    log.add(5, 1, relid=11, data=field(struct.pack(">i", 7)))
    log.add(3, 1, relid=11, data=field(struct.pack(">i", 8)))
    log.add(3, 1, relid=10, data=image(1, "b"))
    log.commit(1)
    changes = log.assemble()["changes"]
    assert [(c["table_name"], c["pairing"]) for c in changes] == [("T", "paired"), ("U", "paired")]
    assert changes[1]["after_image"] == {"K": "8"}


def test_capture_off_transactions_are_flagged_and_left_out():
    log = Log()
    log.start(1, capture_off=True)
    log.insert(1, 1, "a")
    log.commit(1)
    log.start(2)
    log.insert(2, 2, "b")
    log.commit(2)
    result = log.assemble()
    assert [c["transaction_id"] for c in result["changes"]] == ["2"]
    assert by_id(result)["1"]["capture_off"] is True
    assert by_id(result)["1"]["change_count"] == 1
    kept = log.assemble(include_capture_off=True)["changes"]
    assert [c["capture_off"] for c in kept] == [True, False]


def test_no_commit_is_in_flight_and_a_reused_trxid_makes_it_aborted():
    log = Log()
    log.start(1)
    log.insert(1, 1, "a")  # rolled back: solidDB logs nothing more
    log.start(2)
    log.insert(2, 2, "b")  # still open at the end of the capture
    log.start(1)  # TRXID 1 again: the first one ended without COMMIT
    log.insert(1, 3, "c")
    log.commit(1)
    txns = by_id(log.assemble())
    assert {k: t["disposition"] for k, t in txns.items()} == {
        "1": "aborted",
        "2": "in_flight",
        "1#2": "committed",
    }
    assert txns["1#2"]["incarnation"] == 2


def test_trxids_restarting_after_commit_get_new_incarnations():
    log = Log()
    for _ in range(3):
        log.start(9)
        log.insert(9, log.n, "x")
        log.commit(9)
    log.insert(9, 1, "no start")  # a record after the COMMIT with no TRX_START
    log.commit(9)
    txns = log.assemble()["transactions"]
    assert [t["transaction_id"] for t in txns] == ["9", "9#2", "9#3", "9#4"]
    assert [t["has_trx_start"] for t in txns] == [True, True, True, False]
    assert len({t["commit_position"] for t in txns}) == 4


def test_transaction_that_began_before_the_capture():
    log = Log()
    log.insert(4, 1, "a")
    log.commit(4)
    (txn,) = log.assemble()["transactions"]
    assert (txn["transaction_id"], txn["has_trx_start"], txn["disposition"]) == (
        "4",
        False,
        "committed",
    )


def test_commit_order_and_change_seq_with_interleaved_transactions():
    log = Log()
    log.start(1)
    log.start(2)
    log.insert(2, 20, "b")
    log.insert(1, 10, "a")
    log.insert(2, 21, "b")
    c2 = log.commit(2)
    log.insert(1, 11, "a")
    c1 = log.commit(1)
    changes = log.assemble()["changes"]
    assert [(c["transaction_id"], c["change_seq"], c["commit_position"]) for c in changes] == [
        ("2", 1, c2),
        ("2", 2, c2),
        ("1", 1, c1),
        ("1", 2, c1),
    ]
    assert c2 < c1


def test_truncate_ddl_is_a_change_and_schema_events_are_listed():
    log = Log()
    log.start(1)
    log.insert(1, 1, "a")
    log.commit(1)
    log.start(2)
    log.add(13, 2, relid=10, stmttrxid=5, data=field(bytes.fromhex("00000049")) + field(b"T"))
    log.add(6, 2, stmttrxid=5, data=field(b"TRUNCATE TABLE S.T"))
    log.insert(2, 2, "b")
    log.commit(2)
    result = log.assemble()
    assert [(c["operation"], c["table_name"]) for c in result["changes"]] == [
        ("insert", "T"),
        ("truncate", "T"),
        ("insert", "T"),
    ]
    events = result["schema_changes"]
    assert [(e["record_kind"], e["ddl_operation"], e["sql_kind"]) for e in events] == [
        ("ddl", "truncate_table", None),
        ("sql", None, "truncate_table"),
    ]
    tables, problems = replay(result["changes"])
    assert tables[10] == [{"ID": "2", "V": "b"}] and problems == []


def test_nop_shutdown_and_unknown_rows_are_not_transactions():
    log = Log()
    log.add(None, None, flags=0)
    log.add(0, None, flags=2)
    log.start(1)
    log.commit(1)
    assert [t["transaction_id"] for t in log.assemble()["transactions"]] == ["1"]


def test_replay_reports_a_before_image_that_matches_nothing():
    log = Log()
    log.start(1)
    log.delete(1, 1, "ghost")
    log.commit(1)
    tables, problems = replay(log.assemble()["changes"])
    assert tables == {10: []}
    assert problems and "no row matches" in problems[0]


def test_same_row_treats_missing_columns_as_null():
    assert same_row({"A": "1"}, {"A": "1", "ADDED": None})
    assert not same_row({"A": "1"}, {"A": "1", "ADDED": "x"})
