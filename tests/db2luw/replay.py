"""A pure-Python reference replay of a Db2 LUW capture, for the tests (and as an oracle for the
phase-2 SQL models): frame, decode, pick each row's layout by LSN, resolve compensation records
with a per-transaction stack, apply committed transactions in commit order."""

from __future__ import annotations

import json
from pathlib import Path

from udfs.db2luw.records import ROW_KINDS, UNDO_ROW_KINDS, decode_record, iter_log_records
from udfs.db2luw.rows import USER_ROW, LayoutBook, decode_row, read_catalog


def read_capture(folder: Path, framing: str, byteorder: str) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.log")):
        for framed in iter_log_records(path.read_bytes(), framing, byteorder):
            records.append(decode_record(framed.record, byteorder))
    return records


def replay(folder: Path, framing: str = "filter", byteorder: str = "little") -> dict:
    """Final rows per table (``{'SCHEMA.NAME': {key tuple: row}}``) and change counts."""
    catalog = read_catalog(folder / "catalog")
    records = read_capture(folder, framing, byteorder)
    book = LayoutBook(catalog)
    for record in records:
        book.observe(record)
    pending: dict[str, list] = {}
    tables = {layout.qualified_name: {} for layout in catalog.values()}
    stats = {"committed_changes": 0, "internal": 0, "catalog": 0, "in_flight": 0}
    for record in records:
        tid, kind = record["tid"], record["kind"]
        if kind == "commit":
            for change in pending.pop(tid, []):
                _apply(tables, change)
                stats["committed_changes"] += change[0] != "truncate" or 1
        elif kind == "abort":
            pending.pop(tid, None)
        elif kind in ROW_KINDS or kind in UNDO_ROW_KINDS or kind == "ddl_truncate":
            _collect(record, book, pending.setdefault(tid, []), stats, byteorder)
    stats["in_flight"] = sum(len(changes) for changes in pending.values())
    # rows written before a column was added read NULL for it (the catalog is the final state)
    columns = {
        layout.qualified_name: [c.name for c in layout.columns] for layout in catalog.values()
    }
    tables = {name: {key: {c: row.get(c) for c in columns[name]} for key, row in rows.items()}
              for name, rows in tables.items()}  # fmt: skip
    return {"tables": tables, "stats": stats}


def _collect(record: dict, book: LayoutBook, changes: list, stats: dict, byteorder: str) -> None:
    kind = record["kind"]
    if record["catalog_table"]:
        stats["catalog"] += 1
        return
    layout = book.at(record["table_space_identifier"], record["table_identifier"], record["lsn"])
    if kind == "ddl_truncate":
        changes.append(("truncate", layout, None, None))
        return
    if kind in UNDO_ROW_KINDS:
        changes.pop()  # a compensation record reverses the newest change not yet undone
        return
    images = record["images"] or [record["before_image"] or record["after_image"]]
    decoded = [decode_row(image, layout, byteorder) for image in images]
    if decoded[0].record_kind != USER_ROW:
        stats["internal"] += 1
        return
    if kind == "row_update":
        after = decode_row(record["after_image"], layout, byteorder)
        changes.append(("update", layout, decoded[0].values, after.values))
    elif kind == "row_delete":
        changes.append(("delete", layout, decoded[0].values, None))
    else:
        for row in decoded:
            changes.append(("insert", layout, None, row.values))


def _apply(tables: dict, change: tuple) -> None:
    operation, layout, before, after = change
    rows = tables.setdefault(layout.qualified_name, {})
    if operation == "truncate":
        rows.clear()
        return
    if before is not None:
        rows.pop(tuple(before[k] for k in layout.key_columns), None)
    if after is not None:
        rows[tuple(after[k] for k in layout.key_columns)] = after


def truth_tables(root: Path) -> dict:
    raw = json.loads((root / "truth" / "db2luw" / "tables.json").read_text())
    return {
        name: {tuple(row[k] for k in table["key"]): row for row in table["rows"]}
        for name, table in raw.items()
    }


def replay_truth_changes(root: Path) -> dict:
    """Apply changes.jsonl's committed changes in commit order (the truth's own replay)."""
    lines = [json.loads(line) for line in (root / "truth/db2luw/changes.jsonl").open()]
    final = json.loads((root / "truth/db2luw/tables.json").read_text())
    keys = {name: table["key"] for name, table in final.items()}
    tables: dict = {name: {} for name in keys}
    committed = sorted((c for c in lines if c["disposition"] == "committed"),
                       key=lambda c: (c["commit_lsn"], c["lsn"]))  # fmt: skip
    for change in committed:
        rows = tables[change["table"]]
        key = keys[change["table"]]
        if change["operation"] == "truncate":
            rows.clear()
            continue
        if change["before"] is not None:
            rows.pop(tuple(change["before"][k] for k in key), None)
        if change["after"] is not None:
            rows[tuple(change["after"][k] for k in key)] = change["after"]
    # a column added after a row was written reads NULL for that row
    columns = {name: table["columns"] for name, table in final.items()}
    return {name: {key: {c: row.get(c) for c in columns[name]} for key, row in rows.items()}
            for name, rows in tables.items()}  # fmt: skip
