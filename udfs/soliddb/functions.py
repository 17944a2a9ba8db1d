"""Bodies of the solidDB SQL functions (Arrow UDFs registered in :mod:`udfs.spark_udfs`).

``logmart_soliddb_statement(recid, data, char_codec)`` — one DDL (RECID 13) or SQL (RECID 6)
record's DATA decoded: ``logrecid`` and ``info`` of a DDL record, ``sql_text`` and ``sql_kind``
(what the statement does to a table layout: ``create_table``, ``add_column`` … ``other``) of an
SQL record with the table it names (``table_schema``, ``table_name``), ``error`` when the DATA
or the text cannot be read. Other RECIDs give nulls.

``logmart_soliddb_layout_history(tables, columns, records, char_codec, wchar_codec)`` — called
once per capture (``group by capture``): the catalog export's rows (``collect_list`` of
SYS_TABLES / SYS_COLUMNS rows, values as exported text) and the capture's DDL and SQL records
(``collect_list(struct(recid, trxid, stmttrxid, relid, flags, logaddr, data))``, any order).
It replays them exactly as the reference does (:func:`udfs.soliddb.records.decode_capture`:
the catalog is the baseline, each logged CREATE/ALTER/RENAME/DROP TABLE makes a new layout in
force *after* its LOGADDR) and returns every layout version: ``rel_id``,
``valid_from_logaddr`` (``''`` for the catalog baseline, else the statement's LOGADDR in hex),
``layout_json`` (what ``logmart_soliddb_row`` reads; null when the table is dropped),
``column_names``, ``key_columns``, ``column_types`` (each column's type as DDL spells it, in
column order); plus one element with ``error`` for each SQL record whose
statement could not be applied (it makes no version) and one when the catalog is unusable.

``logmart_soliddb_row(data, layout_json)`` — a row record's DATA (RECID 1, 3, 4, 5) decoded with
a layout version: ``values`` and ``null_reasons`` (``logged_null`` / ``not_in_record``, null
for a value) in column order (the SQL zips them with ``column_names``), ``error`` saying why the
DATA could not be decoded.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from udfs import values
from udfs.errors import DecodeError
from udfs.soliddb import batch_rows
from udfs.soliddb.catalog import Column, TableLayout, catalog_layouts
from udfs.soliddb.ddl_sql import parse_statement
from udfs.soliddb.layouts import RecId
from udfs.soliddb.records import (
    DEFAULT_CHAR_CODEC,
    DEFAULT_WCHAR_CODEC,
    decode_capture,
    decode_ddl_data,
    decode_sql_data,
)

STATEMENT_TYPE = (
    "struct<logrecid: int, info: string, sql_text: string, sql_kind: string, "
    "table_schema: string, table_name: string, error: string>"
)
_STATEMENT_ARROW = pa.struct(
    [
        ("logrecid", pa.int32()),
        ("info", pa.string()),
        ("sql_text", pa.string()),
        ("sql_kind", pa.string()),
        ("table_schema", pa.string()),
        ("table_name", pa.string()),
        ("error", pa.string()),
    ]
)
LAYOUT_HISTORY_TYPE = (
    "array<struct<rel_id: bigint, valid_from_logaddr: string, origin: string, "
    "table_schema: string, table_name: string, column_names: array<string>, "
    "key_columns: array<string>, column_types: array<string>, layout_json: string, "
    "is_dropped: boolean, error: string>>"
)
_HISTORY_ARROW = pa.list_(
    pa.struct(
        [
            ("rel_id", pa.int64()),
            ("valid_from_logaddr", pa.string()),
            ("origin", pa.string()),
            ("table_schema", pa.string()),
            ("table_name", pa.string()),
            ("column_names", pa.list_(pa.string())),
            ("key_columns", pa.list_(pa.string())),
            ("column_types", pa.list_(pa.string())),
            ("layout_json", pa.string()),
            ("is_dropped", pa.bool_()),
            ("error", pa.string()),
        ]
    )
)
ROW_TYPE = "struct<values: array<string>, null_reasons: array<string>, error: string>"
_ROW_ARROW = pa.struct(
    [
        ("values", pa.list_(pa.string())),
        ("null_reasons", pa.list_(pa.string())),
        ("error", pa.string()),
    ]
)


# --- DDL and SQL records ----------------------------------------------------------------------


def statement_arrow(recid: pa.Array, data: pa.Array, char_codec: pa.Array) -> pa.Array:
    """Arrow UDF body of ``logmart_soliddb_statement``."""
    out = [
        decode_statement(r, d, c)
        for r, d, c in zip(recid.to_pylist(), data.to_pylist(), char_codec.to_pylist(), strict=True)
    ]
    return pa.array(out, _STATEMENT_ARROW)


def decode_statement(recid: int | None, data: bytes | None, char_codec: str | None) -> dict:
    """One DDL/SQL record's DATA as the function's struct (nulls for other RECIDs)."""
    out: dict[str, Any] = dict.fromkeys(_STATEMENT_ARROW.names)
    if recid not in (RecId.DDL, RecId.SQL):
        return out
    codec = char_codec or DEFAULT_CHAR_CODEC
    try:
        values.check_codec(codec)
        if data is None:
            raise DecodeError(f"{RecId(recid).recname} has no DATA")
        if recid == RecId.DDL:
            ddl = decode_ddl_data(data, char_codec=codec)
            out["logrecid"], out["info"] = ddl["logrecid"], ddl["info"]
        else:
            out["sql_text"] = decode_sql_data(data, char_codec=codec)
            statement = parse_statement(out["sql_text"])
            out["sql_kind"] = statement.kind
            out["table_schema"], out["table_name"] = statement.schema, statement.table
    except DecodeError as exc:
        out["error"] = exc.reason
    return out


# --- layout history ------------------------------------------------------------------------------


def layout_history_arrow(
    tables: pa.Array,
    columns: pa.Array,
    records: pa.Array,
    char_codec: pa.Array,
    wchar_codec: pa.Array,
) -> pa.Array:
    """Arrow UDF body of ``logmart_soliddb_layout_history``: one call per capture."""
    out = [
        layout_history(
            t or [], c or [], r or [], cc or DEFAULT_CHAR_CODEC, wc or DEFAULT_WCHAR_CODEC
        )
        for t, c, r, cc, wc in zip(
            tables.to_pylist(),
            columns.to_pylist(),
            records.to_pylist(),
            char_codec.to_pylist(),
            wchar_codec.to_pylist(),
            strict=True,
        )
    ]
    return pa.array(out, _HISTORY_ARROW)


def layout_history(
    tables: list[dict],
    columns: list[dict],
    records: list[dict],
    char_codec: str,
    wchar_codec: str,
) -> list[dict[str, Any]]:
    """Every layout version of a capture, and an element per statement that could not apply."""
    entries: list[dict[str, Any]] = []
    try:
        baseline = catalog_layouts(_upper(tables), _upper(columns))
    except (DecodeError, KeyError) as exc:
        entries.append(_failure(None, "", "catalog", f"catalog export unusable: {exc}"))
        baseline = []
    try:
        decoded, history = decode_capture(
            records, baseline, char_codec=char_codec, wchar_codec=wchar_codec
        )
    except DecodeError as exc:  # a codec that does not exist
        return [*entries, _failure(None, "", "catalog", str(exc))]
    codecs = {"char_codec": char_codec, "wchar_codec": wchar_codec}
    for rel_id, versions in sorted(history.versions().items()):
        previous: TableLayout | None = None
        for version in versions:
            entries.append(_version(rel_id, version.since, version.layout, previous, codecs))
            previous = version.layout or previous
    for record in decoded:
        if record["recid"] == RecId.SQL and record["decode_error"]:
            entries.append(
                _failure(record["relid"], record["logaddr_hex"], "sql", record["decode_error"])
            )
    return entries


def _upper(rows: list[dict]) -> list[dict[str, str]]:
    """Catalog rows as catalog.py reads the CSV: upper-case names, text values ('' = none)."""
    return [{k.upper(): "" if v is None else str(v) for k, v in row.items()} for row in rows]


def _version(
    rel_id: int,
    since: bytes,
    layout: TableLayout | None,
    previous: TableLayout | None,
    codecs: dict[str, str],
) -> dict[str, Any]:
    named = layout or previous
    return {
        "rel_id": rel_id,
        "valid_from_logaddr": since.hex().upper(),
        "origin": "catalog" if since == b"" else "sql",
        "table_schema": named.schema if named else None,
        "table_name": named.name if named else None,
        "column_names": [c.name for c in layout.columns] if layout else None,
        "key_columns": [c.name for c in layout.key_columns] if layout else None,
        "column_types": [c.ddl_type for c in layout.columns] if layout else None,
        "layout_json": layout_to_json(layout, codecs) if layout else None,
        "is_dropped": layout is None,
        "error": None,
    }


def _failure(rel_id: int | None, logaddr_hex: str, origin: str, reason: str) -> dict[str, Any]:
    entry: dict[str, Any] = dict.fromkeys(_HISTORY_ARROW.value_type.names)
    entry.update(
        rel_id=rel_id,
        valid_from_logaddr=logaddr_hex,
        origin=origin,
        is_dropped=False,
        error=reason,
    )
    return entry


def layout_to_json(layout: TableLayout, codecs: dict[str, str]) -> str:
    """A layout and the code pages as the compact JSON ``logmart_soliddb_row`` reads.

    It travels with every row record to the function, so it holds only what decoding needs:
    ``{"char_codec", "wchar_codec", "columns": [[name, sql_type, scale, nullable], …]}`` in
    DATA field order (names for the error messages).
    """
    document = {
        **codecs,
        "columns": [[c.name, c.sql_type, c.scale, c.nullable] for c in layout.columns],
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def layout_from_json(text: str) -> tuple[tuple[Column, ...], str, str]:
    """(columns, char codec, wchar codec) from a layout JSON; ValueError when unusable."""
    document = json.loads(text)
    columns = tuple(
        Column(name, sql_type, scale=scale, nullable=bool(nullable), position=position)
        for position, (name, sql_type, scale, nullable) in enumerate(document["columns"], 1)
    )
    char_codec = values.check_codec(document.get("char_codec") or DEFAULT_CHAR_CODEC)
    wchar_codec = values.check_codec(document.get("wchar_codec") or DEFAULT_WCHAR_CODEC)
    return columns, char_codec, wchar_codec


# --- row records ---------------------------------------------------------------------------------


def row_arrow(data: pa.Array, layout_json: pa.Array) -> pa.Array:
    """Arrow UDF body of ``logmart_soliddb_row``: rows of several layouts in one batch, each
    layout's rows decoded together (:mod:`udfs.soliddb.batch_rows`)."""
    groups: dict[str, list[int]] = {}
    failures: dict[int, str] = {}
    missing = data.is_null().to_pylist()
    for row, text in enumerate(layout_json.to_pylist()):
        if text is None:
            failures[row] = "no table layout for this table at this LOGADDR"
        elif missing[row]:
            failures[row] = "the row record has no DATA"
        else:
            groups.setdefault(text, []).append(row)
    order: list[np.ndarray] = []
    pieces: list[pa.Array] = []
    for text, rows in groups.items():
        layout = _parsed_layout(text)
        if isinstance(layout, str):
            failures.update(dict.fromkeys(rows, layout))
            continue
        decoded = batch_rows.decode_rows(data.take(pa.array(rows)), *layout)
        order.append(np.array(rows))
        pieces.append(_row_structs(decoded))
    if failures:
        order.append(np.array(list(failures)))
        pieces.append(_row_failures(list(failures.values())))
    if not pieces:
        return pa.array([], _ROW_ARROW)
    inverse = np.empty(len(data), np.int64)
    inverse[np.concatenate(order)] = np.arange(len(data))
    return pa.concat_arrays(pieces).take(pa.array(inverse))


def _parsed_layout(text: str) -> tuple[tuple[Column, ...], str, str] | str:
    try:
        return layout_from_json(text)
    except (ValueError, KeyError, TypeError, DecodeError) as exc:
        return f"table layout unusable: {exc}"


def _row_structs(decoded: batch_rows.DecodedRows) -> pa.Array:
    """Per-column arrays -> one struct per row: values and reasons as lists in column order."""
    rows, width = len(decoded.errors), len(decoded.values)
    failed = pa.array([error is not None for error in decoded.errors])
    offsets = pa.array(np.arange(rows + 1, dtype=np.int32) * width)
    lists = []
    for columns in (decoded.values, decoded.null_reasons):
        if width:
            order = (np.arange(width)[None, :] * rows + np.arange(rows)[:, None]).ravel()
            flat = pa.concat_arrays(columns).take(pa.array(order))
        else:
            flat = pa.array([], pa.string())
        lists.append(pa.ListArray.from_arrays(offsets, flat, mask=failed))
    errors = pa.array(decoded.errors, pa.string())
    return pa.StructArray.from_arrays([*lists, errors], fields=list(_ROW_ARROW))


def _row_failures(reasons: list[str]) -> pa.Array:
    return pa.array([_row_failure(reason) for reason in reasons], _ROW_ARROW)


def _row_failure(reason: str) -> dict[str, Any]:
    return {"values": None, "null_reasons": None, "error": reason}
