"""Debezium change event envelopes from ``marts.fct_changes`` (``logmart export debezium``).

One JSON-lines file per table of each log, named like Debezium's topic
``<prefix>.<schema>.<table>`` with prefix ``<source_system>.<capture>``, holding one envelope
per committed change in commit order, as Debezium's JSON converter writes a message value
without schemas (``value.converter.schemas.enable=false``)::

    {"before": {...} | null, "after": {...} | null,
     "source": {"version", "connector", "name", "ts_ms", "snapshot", "db", "schema", "table",
                "change_lsn", "commit_lsn", "txId", "change_id"},
     "op": "c" | "u" | "d" | "t", "ts_ms": <when exported>,
     "transaction": {"id", "total_order", "data_collection_order"}}

Values: integers and floats (by ``column_types``) as JSON numbers, booleans as JSON booleans,
everything else as the marts' text: decimals as strings (Debezium's
``decimal.handling.mode=string``), binary as hex (``binary.handling.mode=hex``), dates, times
and timestamps as ISO text. Without column types every value is a string.
``source.ts_ms`` is the commit time (null when the log has none), ``ts_ms`` the time of the
export; ``transaction.total_order`` counts the transaction's committed changes,
``data_collection_order`` those on the same table.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from udfs.change_sql import sql_string

CONNECTOR_VERSION = "logmart-0.1.0"
INTEGER_TYPES = re.compile(r"^(SMALLINT|INTEGER|INT|BIGINT|TINYINT)\b", re.IGNORECASE)
FLOAT_TYPES = re.compile(r"^(REAL|FLOAT|DOUBLE)\b", re.IGNORECASE)
BOOLEAN_TYPES = re.compile(r"^BOOLEAN\b", re.IGNORECASE)
UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")

QUERY = """
select
    source_system, capture, table_schema, table_name, op, change_id, transaction_id,
    commit_position, log_position, commit_ts,
    map_entries(before_image) as before_entries,
    map_entries(after_image) as after_entries,
    column_types,
    row_number() over (
        partition by source_system, capture, transaction_id order by change_seq
    ) as total_order,
    row_number() over (
        partition by source_system, capture, transaction_id, table_schema, table_name
        order by change_seq
    ) as data_collection_order
from marts.fct_changes
where disposition = 'committed' {extra}
order by source_system, capture, table_schema, table_name, commit_position, transaction_id,
    change_seq
"""


@dataclass(frozen=True)
class Written:
    path: Path
    events: int


def topic(source_system: str, capture: str, schema: str | None, table: str) -> str:
    """Debezium's topic name <prefix>.<schema>.<table>; characters a topic cannot hold → _."""
    parts = [source_system, capture, *([schema] if schema else []), table]
    return ".".join(UNSAFE.sub("_", part) for part in parts)


def value(text: str | None, data_type: str | None) -> Any:
    """A row value (marts text) as the JSON value Debezium would give for its type."""
    if text is None or data_type is None:
        return text
    if INTEGER_TYPES.match(data_type):
        try:
            return int(text)
        except ValueError:
            return text
    if FLOAT_TYPES.match(data_type):
        number = float(text)
        return number if number == number and abs(number) != float("inf") else text
    if BOOLEAN_TYPES.match(data_type) and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _image(entries: list | None, types: dict | None) -> dict | None:
    if entries is None:
        return None
    types = types or {}
    return {name: value(text, types.get(name)) for name, text in entries}


def epoch_ms(moment: dt.datetime | None) -> int | None:
    """Milliseconds since 1970 of a timestamp read as UTC (the session's time zone)."""
    if moment is None:
        return None
    return calendar.timegm(moment.utctimetuple()) * 1000 + moment.microsecond // 1000


def envelope(row: Any, exported_ms: int) -> dict:
    types = dict(row.column_types) if row.column_types is not None else None
    return {
        "before": _image(row.before_entries, types),
        "after": _image(row.after_entries, types),
        "source": {
            "version": CONNECTOR_VERSION,
            "connector": row.source_system,
            "name": f"{row.source_system}.{row.capture}",
            "ts_ms": epoch_ms(row.commit_ts),
            "snapshot": "false",
            "db": row.capture,
            "schema": row.table_schema,
            "table": row.table_name,
            "change_lsn": row.log_position,
            "commit_lsn": row.commit_position,
            "txId": row.transaction_id,
            "change_id": row.change_id,
        },
        "op": row.op,
        "ts_ms": exported_ms,
        "transaction": {
            "id": row.transaction_id,
            "total_order": row.total_order,
            "data_collection_order": row.data_collection_order,
        },
    }


def export(
    spark: Any, out_dir: Path, source_system: str | None = None, capture: str | None = None
) -> list[Written]:
    """Write every committed change as Debezium envelopes under `out_dir`, one file per table;
    streams the rows (toLocalIterator), so the changes need not fit in memory."""
    extra = ""
    if source_system is not None:
        extra += f" and source_system = {sql_string(source_system)}"
    if capture is not None:
        extra += f" and capture = {sql_string(capture)}"
    out_dir.mkdir(parents=True, exist_ok=True)
    exported_ms = int(time.time() * 1000)
    rows = spark.sql(QUERY.format(extra=extra)).toLocalIterator()
    return list(_write(rows, out_dir, exported_ms))


def _write(rows: Iterator[Any], out_dir: Path, exported_ms: int) -> Iterator[Written]:
    current = None
    handle = None
    count = 0
    opened: set[str] = set()  # two tables whose names differ only in unsafe characters
    try:
        for row in rows:
            name = topic(row.source_system, row.capture, row.table_schema, row.table_name)
            if name != current:
                if handle is not None:
                    handle.close()
                    yield Written(out_dir / f"{current}.jsonl", count)
                current, count = name, 0
                mode = "a" if name in opened else "w"
                handle = (out_dir / f"{name}.jsonl").open(mode, encoding="utf-8")
                opened.add(name)
            handle.write(json.dumps(envelope(row, exported_ms), ensure_ascii=False) + "\n")
            count += 1
    finally:
        if handle is not None:
            handle.close()
    if current is not None:
        yield Written(out_dir / f"{current}.jsonl", count)
