"""A pure-Python reference replay of a Db2 LUW capture, for the tests (and as an oracle for the
phase-2 SQL models): frame, decode, pick each row's table and layout by LSN (a dropped table's
ids may be reused), pair an update whose after image is elsewhere with the insert that carries
it, resolve compensation records with a per-transaction stack, apply committed transactions
in commit order."""

from __future__ import annotations

import json
from pathlib import Path

from udfs.db2luw.records import ROW_KINDS, UNDO_ROW_KINDS, decode_record, iter_log_records
from udfs.db2luw.rows import (
    IMAGE_ELSEWHERE,
    USER_ROW,
    LayoutBook,
    LayoutVersion,
    decode_row,
    read_catalog,
)

UNDONE_BY_POP = UNDO_ROW_KINDS | {"undo_ddl_drop_table"}
CARRIES_UPDATE_IMAGE = 0x04  # an insert image's record type bit: an update's after image


def read_capture(folder: Path, framing: str, byteorder: str) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.log")):
        for framed in iter_log_records(path.read_bytes(), framing, byteorder):
            records.append(decode_record(framed.record, byteorder))
    return records


def table_name(version: LayoutVersion) -> str:
    if version.table_schema:
        return f"{version.table_schema}.{version.table_name}"
    return version.table_name


def replay(folder: Path, framing: str = "filter", byteorder: str = "little") -> dict:
    """Final rows per table (``{'SCHEMA.NAME': {key: row}}``), the rows of each table dropped
    in the capture at its drop (``dropped``, by the name the marts give it) and counts."""
    catalog = read_catalog(folder / "catalog")
    records = read_capture(folder, framing, byteorder)
    book = LayoutBook(catalog)
    for record in records:
        book.observe(record)
    pending: dict[str, list] = {}
    tables = {layout.qualified_name: {} for layout in catalog.values()}
    dropped: dict[str, dict] = {}
    stats = {"committed_changes": 0, "internal": 0, "catalog": 0, "in_flight": 0, "paired": 0}
    for record in records:
        tid, kind = record["tid"], record["kind"]
        if kind == "commit":
            for change in pending.pop(tid, []):
                if change[0] == "drop":
                    dropped[table_name(change[1])] = tables.pop(table_name(change[1]), {})
                elif change[0] != "none":
                    _apply(tables, change)
                    stats["committed_changes"] += 1
        elif kind == "abort":
            pending.pop(tid, None)
        elif kind in ROW_KINDS or kind in UNDONE_BY_POP or kind in ("ddl_truncate",
                                                                    "ddl_drop_table"):  # fmt: skip
            _collect(record, book, pending.setdefault(tid, []), stats, byteorder)
    stats["in_flight"] = sum(
        1 for changes in pending.values() for change in changes if change[0] != "none"
    )
    # rows written before a column was added read NULL for it (the catalog is the final state)
    columns = {
        layout.qualified_name: [c.name for c in layout.columns] for layout in catalog.values()
    }
    tables = {
        name: {key: {c: row.get(c) for c in columns.get(name, row)} for key, row in rows.items()}
        for name, rows in tables.items()
    }
    return {"tables": tables, "dropped": dropped, "stats": stats}


def _collect(record: dict, book: LayoutBook, changes: list, stats: dict, byteorder: str) -> None:
    kind = record["kind"]
    if record["catalog_table"]:
        stats["catalog"] += 1
        return
    if kind in UNDONE_BY_POP:
        changes.pop()  # a compensation record reverses the newest change not yet undone
        return
    version = book.version_at(
        record["table_space_identifier"], record["table_identifier"], record["lsn"]
    )
    if kind in ("ddl_truncate", "ddl_drop_table"):
        changes.append(({"ddl_truncate": "truncate"}.get(kind, "drop"), version, None, None))
        return
    layout = version.layout
    images = record["images"] or [record["before_image"] or record["after_image"]]
    decoded = [decode_row(image, layout, byteorder) for image in images]
    if decoded[0].record_kind != USER_ROW:
        stats["internal"] += 1
        return
    if kind == "row_update":
        after = decode_row(record["after_image"], layout, byteorder)
        after_values = after.values
        if after.record_kind == IMAGE_ELSEWHERE:  # in the transaction's preceding insert
            at = max(i for i, change in enumerate(changes) if change[0] == "insert")
            assert changes[at][4], "the preceding insert's image has no record type bit 0x04"
            after_values = changes[at][3]
            changes[at] = ("none", version, None, None, False)  # undone by its own undo insert
            stats["paired"] += 1
        changes.append(("update", version, decoded[0].values, after_values, False))
    elif kind == "row_delete":
        changes.append(("delete", version, decoded[0].values, None, False))
    else:
        carrier = len(decoded) == 1 and bool(decoded[0].record_type & CARRIES_UPDATE_IMAGE)
        for row in decoded:
            changes.append(("insert", version, None, row.values, carrier))


def _key(version: LayoutVersion, row: dict) -> tuple | str:
    if version.key_columns:
        return tuple(row[k] for k in version.key_columns)
    return json.dumps(row, sort_keys=True)  # no key known (a table the catalog does not have)


def _apply(tables: dict, change: tuple) -> None:
    operation, version, before, after = change[:4]
    rows = tables.setdefault(table_name(version), {})
    if operation == "truncate":
        rows.clear()
        return
    if before is not None:
        rows.pop(_key(version, before), None)
    if after is not None:
        rows[_key(version, after)] = after


def truth_tables(root: Path) -> dict:
    raw = json.loads((root / "truth" / "db2luw" / "tables.json").read_text())
    return {
        name: {tuple(row[k] for k in table["key"]): row for row in table["rows"]}
        for name, table in raw.items()
    }


def dropped_name(table: dict) -> str:
    """The name the marts give a table dropped in the capture (docs/db2luw.md): the catalog
    export, taken at the end, does not name it."""
    return (f"TBSPACEID={table['tbspaceid']},TABLEID={table['tableid']},"
            f"DROPPED_LSN={table['dropped_lsn']:016X}")  # fmt: skip


def truth_dropped(root: Path) -> dict:
    """Each dropped table's rows at its drop, by the marts' name, columns named C1..Cn."""
    raw = json.loads((root / "truth" / "db2luw" / "dropped.json").read_text())
    return {
        dropped_name(table): sorted(
            json.dumps({f"C{n}": row[c] for n, c in enumerate(table["columns"], 1)}, sort_keys=True)
            for row in table["rows"]
        )
        for table in raw.values()
    }


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a .jsonl file, one per line (the file closed at once)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def replay_truth_changes(root: Path) -> tuple[dict, dict]:
    """Apply changes.jsonl's committed changes in commit order (the truth's own replay): the
    final tables, and the tables dropped in the capture (their changes all precede the drop)."""
    lines = read_jsonl(root / "truth/db2luw/changes.jsonl")
    final = json.loads((root / "truth/db2luw/tables.json").read_text())
    dropped = json.loads((root / "truth/db2luw/dropped.json").read_text())
    described = {**dropped, **final}
    tables: dict = {name: {} for name in described}
    committed = sorted((c for c in lines if c["disposition"] == "committed"),
                       key=lambda c: (c["commit_lsn"], c["lsn"]))  # fmt: skip
    for change in committed:
        rows = tables[change["table"]]
        key = described[change["table"]]["key"]
        if change["operation"] == "truncate":
            rows.clear()
            continue
        if change["before"] is not None:
            rows.pop(tuple(change["before"][k] for k in key), None)
        if change["after"] is not None:
            rows[tuple(change["after"][k] for k in key)] = change["after"]
    # a column added after a row was written reads NULL for it
    replayed = {}
    for name, rows in tables.items():
        columns = described[name]["columns"]
        replayed[name] = {key: {c: row.get(c) for c in columns} for key, row in rows.items()}
    return (
        {name: rows for name, rows in replayed.items() if name in final},
        {name: rows for name, rows in replayed.items() if name in dropped},
    )


def truth_dropped_rows(root: Path) -> dict:
    """dropped.json's rows per table, keyed like truth_tables."""
    raw = json.loads((root / "truth" / "db2luw" / "dropped.json").read_text())
    return {
        name: {tuple(row[k] for k in table["key"]): row for row in table["rows"]}
        for name, table in raw.items()
    }
