"""Transactions and changes from decoded SYS_LOG records: the reference logic in pure Python.

The rules (the SQL models express the same ones):

* **Incarnations.** Records are grouped by TRXID in LOGADDR order. A TRX_START for a TRXID seen
  before, or any record for a TRXID whose transaction already committed, starts a new
  *incarnation*: ``transaction_id`` is ``"<trxid>"`` for the first, ``"<trxid>#<n>"`` for the
  n-th (TRXIDs restart, e.g. after a server restart). A transaction whose first record is not a
  TRX_START began before the capture (``has_trx_start`` false).
* **Disposition.** ``committed``: its COMMIT record is in the capture; ``commit_position`` is
  that record's LOGADDR as 40 hex digits (sorts in commit order). solidDB logs no aborts: a
  rolled-back transaction simply has no COMMIT, which the log cannot tell from one still running,
  so it is ``in_flight``; ``aborted`` only when its TRXID was reused by a later TRX_START (it
  ended without committing).
* **CAPTURE_OFF.** A transaction whose TRX_START has the CAPTURE_OFF flag is kept and flagged
  (``capture_off``) and its changes are left out of the changes (not to be propagated).
* **Pairing.** An UPDATE_BEFOREIMAGE (5) pairs with the next UPDATE (3) of the same transaction
  and RELID into one ``update`` with before and after images. A before-image followed by another
  row record of that RELID (or by nothing) stays an update with no after image
  (``pairing = before_only``); an UPDATE without a before-image is ``after_only``.
  A primary-key change is logged as DELETE_FULL + INSERT and stays a delete and an insert.
* **TRUNCATE.** A DDL record with LOGRECID 73 (truncate table) is a ``truncate`` change.
* **Order.** ``change_seq`` numbers a transaction's changes 1.. by the LOGADDR of each change's
  first record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from udfs.soliddb.layouts import DdlLogRecId

ROW_OPERATIONS = frozenset(("insert", "delete"))
IGNORED_KINDS = frozenset(("nop", "empty", "unknown"))
SCHEMA_KINDS = frozenset(("ddl", "sql"))


@dataclass
class _Transaction:
    trxid: int
    incarnation: int
    records: list[dict[str, Any]] = field(default_factory=list)
    has_trx_start: bool = False
    capture_off: bool = False
    commit: dict[str, Any] | None = None
    superseded: bool = False

    @property
    def transaction_id(self) -> str:
        return str(self.trxid) if self.incarnation == 1 else f"{self.trxid}#{self.incarnation}"

    @property
    def disposition(self) -> str:
        if self.commit is not None:
            return "committed"
        return "aborted" if self.superseded else "in_flight"


def group_transactions(records: Iterable[dict[str, Any]]) -> list[_Transaction]:
    """Decoded records (LOGADDR order) -> transactions in order of their first record."""
    current: dict[int, _Transaction] = {}
    seen: dict[int, int] = {}
    ordered: list[_Transaction] = []
    for record in records:
        trxid, kind = record.get("trxid"), record["record_kind"]
        if trxid is None or kind in IGNORED_KINDS:
            continue
        txn = current.get(trxid)
        if kind == "trx_start" or txn is None or txn.commit is not None:
            if txn is not None and kind == "trx_start":
                txn.superseded = True
            seen[trxid] = seen.get(trxid, 0) + 1
            txn = _Transaction(trxid, seen[trxid], has_trx_start=kind == "trx_start")
            txn.capture_off = kind == "trx_start" and record["capture_off"]
            current[trxid] = txn
            ordered.append(txn)
        txn.records.append(record)
        if kind == "commit":
            txn.commit = record
    return ordered


def transaction_changes(txn: _Transaction) -> list[dict[str, Any]]:
    """One transaction's changes (pairing applied), numbered by change_seq."""
    changes: list[dict[str, Any]] = []
    pending: dict[Any, dict[str, Any]] = {}  # RELID -> unpaired UPDATE_BEFOREIMAGE
    for record in txn.records:
        kind, relid = record["record_kind"], record.get("relid")
        if kind == "update_before":
            _flush_before(pending, relid, changes)
            pending[relid] = record
        elif kind == "update":
            before = pending.pop(relid, None)
            changes.append(_change("update", before, record, "paired" if before else "after_only"))
        elif kind in ROW_OPERATIONS:
            _flush_before(pending, relid, changes)
            before, after = (record, None) if kind == "delete" else (None, record)
            changes.append(_change(kind, before, after, None))
        elif kind == "ddl" and record.get("ddl_logrecid") == DdlLogRecId.TRUNCATE_TABLE:
            changes.append(_change("truncate", None, None, None, anchor=record))
    for relid in list(pending):
        _flush_before(pending, relid, changes)
    changes.sort(key=lambda c: c["logaddr"] or "")
    for seq, change in enumerate(changes, start=1):
        change.update(
            change_seq=seq,
            transaction_id=txn.transaction_id,
            trxid=txn.trxid,
            disposition=txn.disposition,
            commit_position=_commit_position(txn),
            capture_off=txn.capture_off,
        )
    return changes


def _flush_before(pending: dict[Any, dict[str, Any]], relid: Any, changes: list) -> None:
    before = pending.pop(relid, None)
    if before is not None:
        changes.append(_change("update", before, None, "before_only"))


def _change(
    operation: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    pairing: str | None,
    anchor: dict[str, Any] | None = None,
) -> dict[str, Any]:
    first = anchor or before or after or {}
    errors = [r["decode_error"] for r in (before, after, anchor) if r and r.get("decode_error")]
    return {
        "operation": operation,
        "relid": first.get("relid"),
        "table_schema": first.get("table_schema"),
        "table_name": first.get("table_name"),
        "before_image": before["values"] if before else None,
        "after_image": after["values"] if after else None,
        "before_null_reasons": before["null_reasons"] if before else None,
        "after_null_reasons": after["null_reasons"] if after else None,
        "pairing": pairing,
        "stmttrxid": first.get("stmttrxid"),
        "logaddr": first.get("logaddr_hex"),
        "before_logaddr": before["logaddr_hex"] if before else None,
        "after_logaddr": after["logaddr_hex"] if after else None,
        "decode_error": "; ".join(errors) or None,
    }


def _commit_position(txn: _Transaction) -> str | None:
    return txn.commit["logaddr_hex"] if txn.commit else None


def transaction_summary(txn: _Transaction, changes: list[dict[str, Any]]) -> dict[str, Any]:
    """One transaction as a row: ids, disposition, positions, counts, tables touched."""
    counts = {op: sum(c["operation"] == op for c in changes) for op in _OPERATIONS}
    tables = sorted(
        {_qualified(c["table_schema"], c["table_name"]) for c in changes if c["table_name"]}
    )
    return {
        "transaction_id": txn.transaction_id,
        "trxid": txn.trxid,
        "incarnation": txn.incarnation,
        "disposition": txn.disposition,
        "capture_off": txn.capture_off,
        "has_trx_start": txn.has_trx_start,
        "begin_position": txn.records[0]["logaddr_hex"],
        "commit_position": _commit_position(txn),
        "record_count": len(txn.records),
        "change_count": len(changes),
        **{f"{op}s": n for op, n in counts.items()},  # inserts, updates, deletes, truncates
        "ddl_count": sum(r["record_kind"] == "ddl" for r in txn.records),
        "decode_errors": sum(bool(r.get("decode_error")) for r in txn.records),
        "tables": tables,
    }


_OPERATIONS = ("insert", "update", "delete", "truncate")


def _qualified(schema: str | None, name: str | None) -> str:
    return f"{schema}.{name}" if schema else (name or "")


def schema_change(txn: _Transaction, record: dict[str, Any]) -> dict[str, Any]:
    """A DDL (13) or SQL (6) record as a schema-change event of its transaction."""
    return {
        "transaction_id": txn.transaction_id,
        "disposition": txn.disposition,
        "commit_position": _commit_position(txn),
        "logaddr": record["logaddr_hex"],
        "record_kind": record["record_kind"],
        "relid": record.get("relid"),
        "table_schema": record.get("table_schema"),
        "table_name": record.get("table_name"),
        "ddl_logrecid": record.get("ddl_logrecid"),
        "ddl_operation": record.get("ddl_operation"),
        "ddl_info": record.get("ddl_info"),
        "sql_text": record.get("sql_text"),
        "sql_kind": record.get("sql_kind"),
        "decode_error": record.get("decode_error"),
    }


def assemble(
    records: Iterable[dict[str, Any]], *, include_capture_off: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """Decoded records (LOGADDR order) -> ``{"transactions", "changes", "schema_changes"}``.

    ``changes`` are in commit order for committed work (commit_position, change_seq), then the
    others in order of their first record; CAPTURE_OFF transactions' changes are left out unless
    ``include_capture_off``.
    """
    transactions, changes, schema_changes = [], [], []
    for txn in group_transactions(records):
        txn_changes = transaction_changes(txn)
        transactions.append(transaction_summary(txn, txn_changes))
        if include_capture_off or not txn.capture_off:
            changes.extend(txn_changes)
        schema_changes.extend(schema_change(txn, r) for r in txn.records if _is_schema(r))
    changes.sort(key=_commit_order)
    return {"transactions": transactions, "changes": changes, "schema_changes": schema_changes}


def _is_schema(record: dict[str, Any]) -> bool:
    return record["record_kind"] in SCHEMA_KINDS


def _commit_order(change: dict[str, Any]) -> tuple[int, str, int]:
    committed = change["commit_position"] is not None
    return (0 if committed else 1, change["commit_position"] or "", change["change_seq"])


# --- replay ------------------------------------------------------------------------------------


def replay(changes: Iterable[dict[str, Any]]) -> tuple[dict[Any, list[dict]], list[str]]:
    """Apply committed changes in commit order to empty tables keyed by RELID.

    Returns (RELID -> rows, problems). A row matches a before image when every column agrees,
    a column missing on one side counting as NULL (rows logged before an ADD COLUMN).
    """
    tables: dict[Any, list[dict]] = {}
    problems: list[str] = []
    committed = [c for c in changes if c["disposition"] == "committed"]
    for change in sorted(committed, key=_commit_order):
        rows = tables.setdefault(change["relid"], [])
        operation = change["operation"]
        if operation == "truncate":
            rows.clear()
            continue
        if operation in ("update", "delete") and not _remove(rows, change["before_image"]):
            problems.append(f"{operation} at {change['logaddr']}: no row matches its before image")
        if operation in ("insert", "update") and change["after_image"] is not None:
            rows.append(dict(change["after_image"]))
    return tables, problems


def _remove(rows: list[dict], image: dict | None) -> bool:
    if image is None:
        return False
    for index, row in enumerate(rows):
        if same_row(row, image):
            del rows[index]
            return True
    return False


def same_row(a: dict, b: dict) -> bool:
    """Rows equal column by column, a column missing on one side counting as NULL."""
    return all(a.get(name) == b.get(name) for name in set(a) | set(b))
