"""Helpers for the mart tests: the generators' tables as a real SQL engine (DuckDB) holds them.

A source's REDO/UNDO SQL (marts.fct_change_sql) is executed against DuckDB tables created from
the generator's truth (truth/<source>/tables.json): typed columns from the truth's types where
it gives them (Log Master), else from the source's `column_types` in fct_changes, else VARCHAR
(the statements then hold string constants only). Rows read back are normalised per column
type so they compare with the truth's text.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

TABLE_DDL = re.compile(r"^\s*(create|alter|drop|truncate)\s+table\b", re.IGNORECASE)
# Log Master truth column types (LLCOLUMNTYPE) -> DuckDB type.
LOGMASTER_DUCKDB_TYPES = {
    "DATE": "DATE",
    "TIME": "TIME",
    "DTTM": "TIMESTAMP",
    "DTTZ": "TIMESTAMPTZ",
    "BLOB": "BLOB",
    "ROWI": "BLOB",
}


def generator_capture(raw: Path, source_system: str) -> str:
    """The capture folder the generator wrote (its summary names it)."""
    summary = json.loads((raw / "truth" / source_system / "summary.json").read_text())
    if "capture" in summary:
        return summary["capture"]
    if "extract" in summary:
        return summary["extract"]
    return summary["files"][0].split("/")[1]


def replayable_tables(raw: Path, source_system: str) -> list[str]:
    """The source's truth tables whose rows the log's changes alone reproduce."""
    truth = json.loads((raw / "truth" / source_system / "tables.json").read_text())
    changed = set()
    schema_changes = raw / "truth" / source_system / "schema_changes.jsonl"
    if schema_changes.exists():
        for line in schema_changes.read_text().splitlines():
            change = json.loads(line)
            if TABLE_DDL.match(change.get("sql_text") or ""):
                changed.add(change.get("relid"))
    return sorted(name for name, table in truth.items() if table.get("rel_id") not in changed)


def duckdb_type(column: dict | str, sql_type: str | None = None) -> str:
    """A truth column's DuckDB type: from the truth's Log Master type, else from the SQL type
    the source gives (`column_types`), else VARCHAR."""
    if isinstance(column, str):
        return duckdb_type_of_sql(sql_type) if sql_type else "VARCHAR"
    kind = column["type"]
    if kind == "INT":
        return {2: "SMALLINT", 4: "INTEGER", 8: "BIGINT"}[column["length"]]
    if kind == "DEC":
        return f"DECIMAL({column['precision']},{column['scale']})"
    if kind == "FLOT":
        return "REAL" if column["length"] == 4 else "DOUBLE"
    if kind in ("CHAR", "VCHR", "LVCH") and column["for_bit_data"]:
        return "BLOB"
    return LOGMASTER_DUCKDB_TYPES.get(kind, "VARCHAR")


def duckdb_type_of_sql(sql_type: str) -> str:
    """DuckDB's type for a Db2 / solidDB SQL type name (DECFLOAT, which DuckDB lacks, is kept
    as text and compared as a decimal number)."""
    t = sql_type.upper()
    if re.match(r"(TINYINT|SMALLINT|BIGINT)\b", t):
        return t.split("(")[0].split()[0]
    if re.match(r"(INTEGER|INT)\b", t):
        return "INTEGER"
    decimal = re.match(r"(DECIMAL|DEC|NUMERIC|NUM)\s*\((\d+)\s*(?:,\s*(\d+))?\)", t)
    if decimal and int(decimal.group(2)) <= 38:
        return f"DECIMAL({decimal.group(2)},{decimal.group(3) or 0})"
    if t.startswith("DECFLOAT") or decimal:
        return "DECFLOAT"
    if t.startswith("REAL"):
        return "REAL"
    if re.match(r"(DOUBLE|FLOAT)\b", t):
        return "DOUBLE"
    if "FOR BIT DATA" in t or re.match(r"(BINARY|VARBINARY|LONG VARBINARY|BLOB)\b", t):
        return "BLOB"
    if t.startswith("TIMESTAMP"):
        return "TIMESTAMPTZ" if "TIME ZONE" in t else "TIMESTAMP"
    if t in ("DATE", "TIME", "BOOLEAN"):
        return t
    return "VARCHAR"


def ddl_type(duck_type: str) -> str:
    return "VARCHAR" if duck_type == "DECFLOAT" else duck_type


def column_name(column: dict | str) -> str:
    return column if isinstance(column, str) else column["name"]


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_tables(
    con: Any, truth: dict, tables: list[str], sql_types: dict[str, dict[str, str]] | None = None
) -> dict[str, dict[str, str]]:
    """CREATE SCHEMA/TABLE for each 'SCHEMA.TABLE' of `tables` (`sql_types`: the source's
    column_types per table, when the truth has no types); returns their column types."""
    types = {}
    for name in tables:
        schema, table = name.split(".", 1)
        given = (sql_types or {}).get(name, {})
        columns = {
            column_name(c): duckdb_type(c, given.get(column_name(c)))
            for c in truth[name]["columns"]
        }
        con.execute(f"create schema if not exists {quoted(schema)}")
        definition = ", ".join(f"{quoted(c)} {ddl_type(t)}" for c, t in columns.items())
        con.execute(f"create table {quoted(schema)}.{quoted(table)} ({definition})")
        types[name] = columns
    return types


def source_column_types(spark: Any, source_system: str, capture: str) -> dict[str, dict]:
    """The latest `column_types` fct_changes has for each 'SCHEMA.TABLE' of one log."""
    found: dict[str, dict] = {}
    for row in spark.sql(
        "select concat(table_schema, '.', table_name) as name, column_types "
        "from marts.fct_changes "
        f"where source_system = '{source_system}' and capture = '{capture}' "
        "and column_types is not null order by commit_position, change_seq"
    ).toLocalIterator():
        found[row.name] = dict(row.column_types)
    return found


def normalise(value: Any, duck_type: str) -> Any:
    """A truth text or a DuckDB value as a comparable Python value for a column type."""
    if value is None:
        return None
    text = isinstance(value, str)
    if text and value.startswith("<unavailable: "):
        return value  # `logmart asof`'s placeholder for a value not in the log, of any type
    if duck_type in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return int(value)
    if duck_type.startswith("DECIMAL") or duck_type == "DECFLOAT":
        return Decimal(value) if text else value
    if duck_type == "REAL":
        return np.float32(float(value))
    if duck_type == "DOUBLE":
        return float(value)
    if duck_type == "BOOLEAN":
        return value.lower() == "true" if text else value
    if duck_type == "BLOB":
        return value.upper() if text else bytes(value).hex().upper()
    if duck_type == "DATE":
        return dt.date.fromisoformat(value) if text else value
    if duck_type == "TIME":
        return dt.time.fromisoformat(value) if text else value
    if duck_type in ("TIMESTAMP", "TIMESTAMPTZ"):
        # DuckDB keeps microseconds: a longer fraction is compared to the microsecond
        if text:
            value = dt.datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", value))
        if duck_type == "TIMESTAMPTZ" and value.tzinfo is not None:
            # an instant: the typed relations and `logmart asof` give it as Spark does, in the
            # session's zone (UTC) without an offset; the truth and DuckDB with one
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value
    return value


def table_rows(con: Any, name: str, types: dict[str, str]) -> Counter:
    """The rows of a DuckDB table, normalised, as a multiset."""
    schema, table = name.split(".", 1)
    columns = list(types)
    select = ", ".join(quoted(c) for c in columns)
    rows = con.execute(f"select {select} from {quoted(schema)}.{quoted(table)}").fetchall()
    return Counter(
        tuple(normalise(v, types[c]) for v, c in zip(row, columns, strict=True)) for row in rows
    )


def truth_rows(rows: list[dict], types: dict[str, str]) -> Counter:
    return Counter(tuple(normalise(row.get(c), t) for c, t in types.items()) for row in rows)


# A value the log does not carry (the truth's `unavailable`, issue 14 item 9): REDO leaves its
# column out, so the replayed table holds whatever the column had (NULL, or an earlier value);
# neither side knows it, and the comparison masks it on both.
UNKNOWN = "<not in the log>"


def unknown_values(table: dict, types: dict[str, str]) -> dict[tuple, set[str]]:
    """Per row key (normalised key values, the truth's `key` order): the columns of the truth's
    final row whose values the log does not carry; empty when the truth names none."""
    key = table.get("key") or []
    unknown: dict[tuple, set[str]] = {}
    for row, why in zip(table["rows"], table.get("unavailable") or [], strict=False):
        if why and key:
            unknown[tuple(normalise(row.get(k), types[k]) for k in key)] = set(why)
    return unknown


def masked(rows: Counter, table: dict, types: dict[str, str]) -> Counter:
    """``rows`` (table_rows / truth_rows) with the values :func:`unknown_values` names
    replaced by :data:`UNKNOWN`."""
    unknown = unknown_values(table, types)
    if not unknown:
        return rows
    columns = list(types)
    at = [columns.index(k) for k in table["key"]]
    out: Counter = Counter()
    for values, count in rows.items():
        hidden = unknown.get(tuple(values[i] for i in at), set())
        out[tuple(UNKNOWN if c in hidden else v for c, v in zip(columns, values, strict=True))] += (
            count
        )
    return out
