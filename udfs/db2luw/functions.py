"""Bodies of the Db2 LUW SQL functions (Arrow UDFs registered in :mod:`udfs.spark_udfs`).

``logmart_db2luw_layout_history(catalog_json, settings_json, layout_records)`` — called once
per table ids (``group by`` capture, table space, table): the catalog export's columns as JSON
(null when the ids are not in the export), the character settings, and the ids'
initialize-table / add / drop / alter column, create / drop table and update partition state
records (``collect_list(struct(lsn, kind, …))``, any order; a partition state record carries
its master table's catalog JSON as ``master_catalog``). Returns every layout version of every
table that had the ids in the capture (a dropped table's ids may be reused), built by
:class:`udfs.db2luw.rows.LayoutBook`: ``valid_from_lsn`` (-1 = from the start of the capture),
``valid_to_lsn`` (exclusive; null = in force at the end), ``incarnation`` (1, 2, … per ids),
``table_schema`` / ``table_name`` / ``key_columns`` (the catalog's for the table there at the
end, else ``TBSPACEID=..,TABLEID=..[,DROPPED_LSN=..]``), ``dropped_lsn``, ``layout_json`` (what
``logmart_db2luw_row`` reads), ``column_names``, ``column_types`` (as Db2 DDL spells them),
``layout_source``, ``master_table_space_identifier`` / ``master_table_identifier`` (the
partitioned table's ids while these ids are one of its data partitions, docs/db2luw.md
interpretation 21); or, for a table no layout can be built for, one element with ``error`` set.

``logmart_db2luw_row(image, layout_json, byteorder)`` — one row image ("record header and
data") decoded with a layout version: ``values`` and ``null_reasons`` in column order (the
SQL zips them with ``column_names``), ``unavailable`` (column order: the
:mod:`udfs.unavailable` reason of each value the log does not carry, null for every other),
``error`` (why the image could not be decoded), ``is_user_row``, ``record_kind``
(``user_row`` / ``internal`` / ``image_elsewhere`` / ``not_user_record``, see
:func:`udfs.db2luw.rows.decode_row`) and ``record_type`` (the outer record type: an insert
whose type has the 0x04 bit carries the after image of the update record that follows it).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from udfs.db2luw import batch_rows

# The UDF's struct, the layout JSON and the per-row decoding live with the batch decoder: the
# raw load's option images uses them too (so they belong to raw_version, this module does not).
from udfs.db2luw.batch_rows import DEFAULT_SETTINGS as DEFAULT_SETTINGS
from udfs.db2luw.batch_rows import ROW_ARROW as ROW_ARROW
from udfs.db2luw.batch_rows import decode_image as decode_image
from udfs.db2luw.batch_rows import layout_from_json as layout_from_json
from udfs.db2luw.batch_rows import layout_to_json, row_failure
from udfs.db2luw.rows import (
    BIGINT,
    BINARY,
    BLOB,
    BOOLEAN,
    CHAR,
    CLOB,
    DATE,
    DBCLOB,
    DECFLOAT64,
    DECFLOAT128,
    DECIMAL,
    DOUBLE,
    GRAPHIC,
    INTEGER,
    LONG_VARCHAR,
    LONG_VARGRAPHIC,
    REAL,
    SMALLINT,
    TIME,
    TIMESTAMP,
    VARBINARY,
    VARCHAR,
    VARGRAPHIC,
    XML,
    Column,
    LayoutBook,
    LayoutVersion,
    TableLayout,
    catalog_layout,
    resolve_distinct_type,
)
from udfs.errors import DecodeError

LAYOUT_HISTORY_TYPE = (
    "array<struct<valid_from_lsn: bigint, valid_to_lsn: bigint, incarnation: int, "
    "table_schema: string, table_name: string, key_columns: array<string>, dropped_lsn: bigint, "
    "layout_json: string, column_names: array<string>, column_types: array<string>, "
    "layout_source: string, error: string, master_table_space_identifier: int, "
    "master_table_identifier: int>>"
)
_HISTORY_ARROW = pa.list_(
    pa.struct(
        [
            ("valid_from_lsn", pa.int64()),
            ("valid_to_lsn", pa.int64()),
            ("incarnation", pa.int32()),
            ("table_schema", pa.string()),
            ("table_name", pa.string()),
            ("key_columns", pa.list_(pa.string())),
            ("dropped_lsn", pa.int64()),
            ("layout_json", pa.string()),
            ("column_names", pa.list_(pa.string())),
            ("column_types", pa.list_(pa.string())),
            ("layout_source", pa.string()),
            ("error", pa.string()),
            ("master_table_space_identifier", pa.int32()),
            ("master_table_identifier", pa.int32()),
        ]
    )
)
ROW_TYPE = (
    "struct<values: array<string>, null_reasons: array<string>, error: string, "
    "is_user_row: boolean, record_kind: string, record_type: int, unavailable: array<string>>"
)
# --- layout history -----------------------------------------------------------------------------


def layout_history_arrow(
    catalog_json: pa.Array, settings_json: pa.Array, layout_records: pa.Array
) -> pa.Array:
    """Arrow UDF body: one call per table (see the module docstring)."""
    out = [
        layout_history(catalog, settings, records)
        for catalog, settings, records in zip(
            catalog_json.to_pylist(),
            settings_json.to_pylist(),
            layout_records.to_pylist(),
            strict=True,
        )
    ]
    return pa.array(out, _HISTORY_ARROW)


def layout_history(
    catalog_text: str | None, settings_text: str | None, records: list[dict] | None
) -> list[dict[str, Any]]:
    """Every layout version of the tables of one pair of ids, or one element saying why there
    is none. An update partition state record (137/108) carries its master table's catalog
    JSON as ``master_catalog`` (interpretation 21: the partition takes that table's layout)."""
    settings = json.loads(settings_text) if settings_text else {}
    records = sorted(records or [], key=lambda record: record["lsn"])
    try:
        catalog = _catalog(catalog_text)
        if catalog is None and not records:
            return []
        layouts = {catalog_ids(catalog): catalog} if catalog else {}
        for record in records:
            master = _catalog(record.get("master_catalog"))
            if master is not None:
                layouts.setdefault(catalog_ids(master), master)
        key = catalog_ids(catalog) if catalog else _record_ids(records[0])
        book = LayoutBook(layouts, _catalog_partition(catalog_text, key))
        for record in records:
            book.observe(record)
        versions = book.history(*key)
    except (DecodeError, KeyError, TypeError, ValueError) as exc:
        return [_failed(f"no table layout: {exc}")]
    if not versions:
        return [_failed("no table layout: neither the catalog export nor an initialize-table "
                        "record describes the table")]  # fmt: skip
    return [_version(version, settings) for version in versions]


def _catalog_partition(
    text: str | None, key: tuple[int, int]
) -> dict[tuple[int, int], tuple[int, int]]:
    """{partition ids: table ids} when the catalog JSON is a data partition's (SYSCAT.
    DATAPARTITIONS: the SQL gives it its table's columns and ``master_tbspaceid/tableid``)."""
    table = json.loads(text) if text else {}
    if table.get("master_tbspaceid") is None or table.get("master_tableid") is None:
        return {}
    return {key: (int(table["master_tbspaceid"]), int(table["master_tableid"]))}


def _version(version: LayoutVersion, settings: dict[str, str]) -> dict[str, Any]:
    layout = version.layout
    return {
        "valid_from_lsn": version.valid_from_lsn,
        "valid_to_lsn": version.valid_to_lsn,
        "incarnation": version.incarnation,
        "table_schema": version.table_schema,
        "table_name": version.table_name,
        "key_columns": list(version.key_columns),
        "dropped_lsn": version.dropped_lsn,
        "layout_json": None if layout is None else layout_to_json(layout, settings),
        "column_names": None if layout is None else [column.name for column in layout.columns],
        "column_types": None if layout is None else [column_type(c) for c in layout.columns],
        "layout_source": None if layout is None else layout.source,
        "error": None if version.error is None else f"no table layout: {version.error}",
        "master_table_space_identifier": None if version.master is None else version.master[0],
        "master_table_identifier": None if version.master is None else version.master[1],
    }


def _failed(reason: str) -> dict[str, Any]:
    return {"valid_from_lsn": -1, "valid_to_lsn": None, "incarnation": 1, "table_schema": None,
            "table_name": None, "key_columns": None, "dropped_lsn": None, "layout_json": None,
            "column_names": None, "column_types": None, "layout_source": None,
            "error": reason, "master_table_space_identifier": None,
            "master_table_identifier": None}  # fmt: skip


_SIMPLE_TYPES = {
    SMALLINT: "SMALLINT", INTEGER: "INTEGER", BIGINT: "BIGINT", REAL: "REAL", DOUBLE: "DOUBLE",
    DATE: "DATE", TIME: "TIME", BOOLEAN: "BOOLEAN", DECFLOAT64: "DECFLOAT(16)",
    DECFLOAT128: "DECFLOAT(34)", LONG_VARCHAR: "LONG VARCHAR",
    LONG_VARGRAPHIC: "LONG VARGRAPHIC", XML: "XML",
}  # fmt: skip
_SIZED_TYPES = {CHAR: "CHAR", VARCHAR: "VARCHAR", BINARY: "BINARY", VARBINARY: "VARBINARY"}
_DOUBLE_BYTE_TYPES = {GRAPHIC: "GRAPHIC", VARGRAPHIC: "VARGRAPHIC"}
_LOB_TYPES = {BLOB: "BLOB", CLOB: "CLOB", DBCLOB: "DBCLOB"}


def column_type(column: Column) -> str:
    """The column's SQL type as Db2 DDL spells it (fct_changes.column_types)."""
    t = column.field_type
    if t in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[t]
    if t == DECIMAL:
        return f"DECIMAL({column.precision},{column.scale or 0})"
    if t in _SIZED_TYPES:
        bits = " FOR BIT DATA" if column.for_bit_data else ""
        return f"{_SIZED_TYPES[t]}({column.length}){bits}"
    if t in _DOUBLE_BYTE_TYPES:
        return f"{_DOUBLE_BYTE_TYPES[t]}({column.length // 2})"
    if t == TIMESTAMP:
        digits = max(0, (column.length - 7) * 2)
        return "TIMESTAMP" if digits == 6 else f"TIMESTAMP({digits})"
    if t in _LOB_TYPES:
        size = column.lob_length or column.length
        size = size // 2 if t == DBCLOB else size
        return f"{_LOB_TYPES[t]}({size})" if size else _LOB_TYPES[t]
    return column.type_name


def catalog_ids(layout: TableLayout) -> tuple[int, int]:
    return layout.table_space_identifier, layout.table_identifier


def _record_ids(record: dict) -> tuple[int, int]:
    return record["table_space_identifier"], record["table_identifier"]


def _catalog(text: str | None) -> TableLayout | None:
    """The catalog layout from the SQL's JSON of one table and its SYSCAT.COLUMNS rows."""
    if not text:
        return None
    table = json.loads(text)
    if not isinstance(table, dict) or not all(
        isinstance(column, dict) for column in table.get("columns") or []
    ):
        raise DecodeError("the catalog JSON is not a table with a list of column objects")
    rows = [
        {key.upper(): "" if value is None else str(value) for key, value in column.items()}
        for column in sorted(table.get("columns") or [], key=lambda column: column["colno"])
    ]
    rows = [resolve_distinct_type(row, {}) for row in rows]  # the SQL joined SYSCAT.DATATYPES
    return catalog_layout(
        table["tabschema"],
        table["tabname"],
        (table["tbspaceid"], table["tableid"]),
        rows,
        table.get("compression"),
    )


# --- row images ---------------------------------------------------------------------------------


def row_arrow(image: pa.Array, layout_json: pa.Array, byteorder: pa.Array) -> pa.Array:
    """Arrow UDF body: decode a batch of row images, each with its own layout version.

    The images of one layout and byte order are decoded together, column-at-a-time
    (:func:`udfs.db2luw.batch_rows.decode_images`); the result is in the input's order."""
    groups: dict[tuple[str | None, str | None], list[int]] = {}
    for row, key in enumerate(zip(layout_json.to_pylist(), byteorder.to_pylist(), strict=True)):
        groups.setdefault(key, []).append(row)
    image_nulls = image.is_null()
    parts, positions = [], []
    for (text, order), rows in groups.items():
        images = image.take(pa.array(rows, pa.int64()))
        parts.append(_decode_group(images, text, order))
        positions.extend(rows)
    if not parts:
        return pa.array([], ROW_ARROW)
    where = [0] * len(positions)
    for at, row in enumerate(positions):
        where[row] = at
    decoded = pa.concat_arrays(parts).take(pa.array(where, pa.int64()))
    # a null image is a null row whatever its layout says
    return pc.if_else(image_nulls, pa.scalar(None, ROW_ARROW), decoded)


_LAYOUTS: dict[str, tuple[TableLayout, dict] | str] = {}


def _decode_group(images: pa.Array, text: str | None, order: str | None) -> pa.Array:
    """One layout's images: decoded together, or each with the reason there is no layout."""
    if text is None:
        failure = row_failure("no table layout for this table at this LSN")
        return pa.array([failure] * len(images), ROW_ARROW)
    if text not in _LAYOUTS:
        try:
            _LAYOUTS[text] = layout_from_json(text)
        except (ValueError, KeyError, TypeError) as exc:
            _LAYOUTS[text] = f"table layout unusable: {exc}"
        if len(_LAYOUTS) > 256:  # a long build sees many versions: keep the recent ones
            del _LAYOUTS[next(iter(_LAYOUTS))]
    found = _LAYOUTS[text]
    if isinstance(found, str):
        return pa.array([row_failure(found)] * len(images), ROW_ARROW)
    return batch_rows.decode_images(images, found[0], found[1], order or "little")
