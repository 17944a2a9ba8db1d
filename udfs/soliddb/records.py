"""Decoding SYS_LOG records: row values, DDL records, SQL text, and a whole capture.

Values are rendered as ``../shared/specs/README.md`` "Value rendering" says, with solidDB's
encodings (``004_…`` type table; framing in :mod:`udfs.soliddb.data_format`):

* CHAR/VARCHAR/LONG VARCHAR: text in ``char_codec`` (default UTF-8, solidDB's Unicode mode;
  ``latin-1`` for a partial-Unicode database), not trimmed;
* WCHAR/WVARCHAR/LONG WVARCHAR: text in ``wchar_codec`` (default UTF-16BE: the spec stores every
  other multi-byte value MSB first, and solidDB keeps wide characters in that order too);
* BINARY/VARBINARY/LONG VARBINARY: upper-case hex;
* FLOAT/DOUBLE PRECISION: the shortest text that round-trips; REAL the shortest single-precision
  text when the stored double is exactly a float32;
* BIT/TINYINT/SMALLINT/INTEGER (4 bytes), BIGINT (8 bytes): plain integers;
* DATE ``YYYY-MM-DD``, TIME ``HH:MM:SS``, TIMESTAMP ``YYYY-MM-DD HH:MM:SS.fffffffff``
  (the 4-byte fraction read as nanoseconds, always 9 digits);
* NUMERIC/DECIMAL: the DFLOAT text as plain decimal text with the column's scale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from udfs import unavailable, values
from udfs.errors import DecodeError
from udfs.soliddb.catalog import Column, LayoutHistory, TableLayout
from udfs.soliddb.data_format import field_value, split_ddl, split_fields, split_sql
from udfs.soliddb.layouts import (
    FIXED_WIDTHS,
    ROW_RECIDS,
    DdlLogRecId,
    Encoding,
    Flags,
    RecId,
    flag_names,
)

DEFAULT_CHAR_CODEC = "utf-8"
DEFAULT_WCHAR_CODEC = "utf-16-be"

# Why a value is NULL (python-mysql-replication's "none_sources"): the log said NULL, or the
# record holds no field for the column (a row logged before the column was added).
NULL_LOGGED = "logged_null"
NULL_NOT_IN_RECORD = "not_in_record"
# A NULL reason that is a value the log does not carry -> its udfs.unavailable reason
# (int_soliddb_changes_standardized writes the same in SQL). solidDB's SYS_LOG spec
# (004_…) stores every type, LONG VARCHAR/VARBINARY included, "as raw data bytes" in DATA:
# nothing is out of row, so a column added after the row was written is the only case.
UNAVAILABLE_REASONS: dict[str, str] = {NULL_NOT_IN_RECORD: unavailable.ADDED_AFTER_ROW}


def unavailable_reasons(null_reasons: dict[str, str]) -> dict[str, str]:
    """Column -> udfs.unavailable reason of each NULL the log did not say (a logged NULL is
    not there)."""
    return {
        name: UNAVAILABLE_REASONS[why]
        for name, why in null_reasons.items()
        if why in UNAVAILABLE_REASONS
    }


# record_kind per RECID; FLAGS 0 with no RECID is a NOP row.
RECORD_KINDS: dict[int, str] = {
    RecId.EMPTY: "empty",
    RecId.INSERT: "insert",
    RecId.UPDATE: "update",
    RecId.DELETE_FULL: "delete",
    RecId.UPDATE_BEFOREIMAGE: "update_before",
    RecId.SQL: "sql",
    RecId.TRX_START: "trx_start",
    RecId.COMMIT: "commit",
    RecId.DDL: "ddl",
}


# --- values ------------------------------------------------------------------------------------


def _char(raw: bytes, column: Column, codecs: tuple[str, str]) -> str:
    return values.text(raw, codecs[0])


def _unicode(raw: bytes, column: Column, codecs: tuple[str, str]) -> str:
    return values.text(raw, codecs[1])


def _binary(raw: bytes, column: Column, codecs: tuple[str, str]) -> str:
    return values.hex_upper(raw)


def _double(raw: bytes, column: Column, codecs: tuple[str, str]) -> str:
    return values.render_float(values.ieee_float(raw), single=column.sql_type == "REAL")


def _integer(raw: bytes, column: Column, codecs: tuple[str, str]) -> str:
    return str(values.int_be(raw))


def _date(raw: bytes, column: Column, codecs: tuple[str, str]) -> str:
    return values.datetime11_text(raw, column.sql_type)


def _dfloat(raw: bytes, column: Column, codecs: tuple[str, str]) -> str:
    return values.decimal_text(values.text(raw, "ascii"), column.scale)


_RENDERERS: dict[Encoding, Callable[[bytes, Column, tuple[str, str]], str]] = {
    Encoding.CHAR: _char,
    Encoding.UNICODE: _unicode,
    Encoding.BINARY: _binary,
    Encoding.DOUBLE_FLOAT: _double,
    Encoding.INTEGER: _integer,
    Encoding.BIGINT: _integer,
    Encoding.DATE: _date,
    Encoding.DFLOAT: _dfloat,
}
_HAS_EMPTY_VALUE = frozenset((Encoding.CHAR, Encoding.UNICODE, Encoding.BINARY))


def decode_value(
    raw: bytes,
    column: Column,
    *,
    char_codec: str = DEFAULT_CHAR_CODEC,
    wchar_codec: str = DEFAULT_WCHAR_CODEC,
) -> str:
    """One non-NULL value's bytes rendered as text; DecodeError names the column."""
    try:
        encoding = column.encoding
        if encoding is None:
            raise DecodeError(f"type {column.sql_type} has no known DATA encoding")
        width = FIXED_WIDTHS.get(encoding)
        if width is not None and len(raw) != width:
            raise DecodeError(f"{encoding} value is {width} bytes, got {len(raw)}")
        return _RENDERERS[encoding](raw, column, (char_codec, wchar_codec))
    except DecodeError as exc:
        raise DecodeError(f"column {column.name} ({column.sql_type}): {exc.reason}") from None


def decode_row_data(
    data: bytes,
    columns: Sequence[Column],
    *,
    char_codec: str = DEFAULT_CHAR_CODEC,
    wchar_codec: str = DEFAULT_WCHAR_CODEC,
) -> tuple[dict[str, str | None], dict[str, str]]:
    """A row record's DATA -> (column name -> rendered value or None, column name -> why NULL).

    ``null_reasons`` holds an entry for each NULL value: ``logged_null`` or ``not_in_record``.
    """
    fields = split_fields(data)
    if len(fields) > len(columns):
        raise DecodeError(
            f"DATA holds {len(fields)} fields but the table layout has {len(columns)} columns"
        )
    row: dict[str, str | None] = {}
    null_reasons: dict[str, str] = {}
    for index, column in enumerate(columns):
        if index >= len(fields):
            row[column.name] = None
            null_reasons[column.name] = NULL_NOT_IN_RECORD
            continue
        raw = _field_or_null(fields[index], column)
        if raw is None:
            row[column.name] = None
            null_reasons[column.name] = NULL_LOGGED
        else:
            row[column.name] = decode_value(
                raw, column, char_codec=char_codec, wchar_codec=wchar_codec
            )
    return row, null_reasons


def _field_or_null(raw: bytes, column: Column) -> bytes | None:
    try:
        return field_value(
            raw, nullable=column.nullable, empty_allowed=column.encoding in _HAS_EMPTY_VALUE
        )
    except DecodeError as exc:
        raise DecodeError(f"column {column.name} ({column.sql_type}): {exc.reason}") from None


# --- DDL and SQL records -----------------------------------------------------------------------


def decode_ddl_data(data: bytes, *, char_codec: str = DEFAULT_CHAR_CODEC) -> dict[str, Any]:
    """A DDL record's DATA -> ``{"logrecid", "ddl_operation", "info"}``.

    ``ddl_operation`` is ``create_table`` … from the LOGRECID table, None for an unknown LOGRECID
    (kept, not an error: the record is still a DDL event).
    """
    logrecid, info = split_ddl(data)
    try:
        operation: str | None = DdlLogRecId(logrecid).operation
    except ValueError:
        operation = None
    return {"logrecid": logrecid, "ddl_operation": operation, "info": values.text(info, char_codec)}


def decode_sql_data(data: bytes, *, char_codec: str = DEFAULT_CHAR_CODEC) -> str:
    """An SQL record's DATA -> the statement text."""
    return values.text(split_sql(data), char_codec)


# --- one record --------------------------------------------------------------------------------


def record_kind(recid: int | None, flags: int | None) -> str:
    """What a SYS_LOG row is: ``nop`` (FLAGS 0, no record), ``insert`` … ``ddl``, ``unknown``."""
    if not flags and recid in (None, RecId.EMPTY):
        return "nop"
    if recid is None:
        return "unknown"
    return RECORD_KINDS.get(recid, "unknown")


def logaddr_hex(logaddr: bytes | None) -> str | None:
    """LOGADDR as 40 upper-case hex digits: sorts as the binary LOGADDR does."""
    return None if logaddr is None else logaddr.hex().upper()


def decode_record(
    row: dict[str, Any],
    history: LayoutHistory,
    *,
    char_codec: str = DEFAULT_CHAR_CODEC,
    wchar_codec: str = DEFAULT_WCHAR_CODEC,
) -> dict[str, Any]:
    """A SYS_LOG row (reader dict) -> the decoded record (keys: see :func:`_empty_decoded`).

    Row records are decoded with the layout of their RELID in force at their LOGADDR. Any
    DecodeError becomes ``decode_error`` (a sentence naming RECID and LOGADDR); the record is
    kept. A reader's ``decode_error`` (bad hex …) is kept and nothing more is decoded.
    """
    out = _empty_decoded(row)
    if out["decode_error"] or out["record_kind"] in ("nop", "unknown", "empty"):
        return out
    try:
        _decode_payload(out, row, history, (char_codec, wchar_codec))
    except DecodeError as exc:
        where = f"RECID {row.get('recid')} at LOGADDR {out['logaddr_hex']}"
        out["decode_error"] = f"{exc.reason} ({where})"
    return out


def _empty_decoded(row: dict[str, Any]) -> dict[str, Any]:
    flags = row.get("flags") or 0
    recid = row.get("recid")
    kind = record_kind(recid, flags)
    if kind == "nop" and row.get("decode_error"):
        kind = "unknown"  # an unreadable row is not a NOP, even when its columns read as NULL
    recname = row.get("recname")
    if recname is None and recid in RECORD_KINDS:
        recname = RecId(recid).recname
    return {
        "row_number": row.get("row_number"),
        "recid": recid,
        "recname": recname,
        "record_kind": kind,
        "trxid": row.get("trxid"),
        "stmttrxid": row.get("stmttrxid"),
        "relid": row.get("relid"),
        "flags": flags,
        "flag_names": flag_names(flags),
        "capture_off": bool(flags & Flags.CAPTURE_OFF),
        "shutdown": bool(flags & Flags.SHUTDOWN),
        "logaddr": row.get("logaddr"),
        "logaddr_hex": logaddr_hex(row.get("logaddr")),
        "table_schema": None,
        "table_name": None,
        "values": None,
        "null_reasons": None,
        "ddl_logrecid": None,
        "ddl_operation": None,
        "ddl_info": None,
        "sql_text": None,
        "sql_kind": None,
        "decode_error": row.get("decode_error"),
    }


def _decode_payload(
    out: dict[str, Any], row: dict[str, Any], history: LayoutHistory, codecs: tuple[str, str]
) -> None:
    recid, data, logaddr = row.get("recid"), row.get("data"), row.get("logaddr")
    if logaddr is None:
        raise DecodeError("LOGADDR is missing")
    if recid in ROW_RECIDS or recid in (RecId.DDL, RecId.SQL):
        if data is None:
            raise DecodeError(f"{RecId(recid).recname} has no DATA")
    if recid in ROW_RECIDS:
        layout = _row_layout(row, history, logaddr)
        out["table_schema"], out["table_name"] = layout.schema, layout.name
        out["values"], out["null_reasons"] = decode_row_data(
            data, layout.columns, char_codec=codecs[0], wchar_codec=codecs[1]
        )
    elif recid == RecId.DDL:
        ddl = decode_ddl_data(data, char_codec=codecs[0])
        out["ddl_logrecid"], out["ddl_operation"], out["ddl_info"] = (
            ddl["logrecid"],
            ddl["ddl_operation"],
            ddl["info"],
        )
        _name_table(out, history, logaddr)
    elif recid == RecId.SQL:
        out["sql_text"] = decode_sql_data(data, char_codec=codecs[0])


def _row_layout(row: dict[str, Any], history: LayoutHistory, logaddr: bytes) -> TableLayout:
    rel_id = row.get("relid")
    if rel_id is None:
        raise DecodeError("row record has no RELID")
    layout = history.layout_at(rel_id, logaddr)
    if layout is None:
        raise DecodeError(
            f"no table layout for RELID {rel_id} (not in the catalog export, "
            "nor created by SQL earlier in the log)"
        )
    return layout


def _name_table(out: dict[str, Any], history: LayoutHistory, logaddr: bytes) -> None:
    """A table DDL record's table: its RELID's layout in force before it (so a truncate or drop
    names its table), else the name INFO holds (a table the record creates)."""
    if not (out["ddl_operation"] or "").endswith("_table"):
        return
    layout = None if out["relid"] is None else history.layout_at(out["relid"], logaddr)
    if layout is not None:
        out["table_schema"], out["table_name"] = layout.schema, layout.name
    elif out["ddl_info"]:
        schema, _, name = out["ddl_info"].rpartition(".")
        out["table_schema"], out["table_name"] = schema or None, name


# --- a whole capture ---------------------------------------------------------------------------


def decode_capture(
    rows: Iterable[dict[str, Any]],
    baseline: Iterable[TableLayout] = (),
    *,
    char_codec: str = DEFAULT_CHAR_CODEC,
    wchar_codec: str = DEFAULT_WCHAR_CODEC,
) -> tuple[list[dict[str, Any]], LayoutHistory]:
    """Decode a capture's rows in LOGADDR order, applying logged DDL text to the layouts.

    Returns (decoded records in LOGADDR order, NOP rows and rows without LOGADDR last in file
    order; the layout history). An SQL record's RELID is its own, else that of the DDL record
    (RECID 13) of the same TRXID and STMTTRXID nearest to it, else the table is found by name.
    The reference implementation: it holds the capture in memory.
    """
    values.check_codec(char_codec)
    values.check_codec(wchar_codec)
    ordered = _in_log_order(list(rows))
    history = LayoutHistory(baseline)
    ddl_relids = _ddl_relids(ordered)
    decoded = []
    for position, row in enumerate(ordered):
        record = decode_record(row, history, char_codec=char_codec, wchar_codec=wchar_codec)
        if record["sql_text"] is not None and record["decode_error"] is None:
            _apply_sql(record, history, ddl_relids, position)
        decoded.append(record)
    return decoded, history


def _in_log_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """By LOGADDR (binary compare); rows without one keep their file order, at the end."""
    addressed = [r for r in rows if isinstance(r.get("logaddr"), bytes | bytearray)]
    others = [r for r in rows if not isinstance(r.get("logaddr"), bytes | bytearray)]
    return sorted(addressed, key=lambda r: bytes(r["logaddr"])) + others


def _ddl_relids(rows: list[dict[str, Any]]) -> dict[tuple[Any, Any], list[tuple[int, int]]]:
    """(TRXID, STMTTRXID) -> [(position, RELID)] of DDL records that carry a RELID."""
    found: dict[tuple[Any, Any], list[tuple[int, int]]] = {}
    for position, row in enumerate(rows):
        if row.get("recid") == RecId.DDL and row.get("relid") is not None:
            key = (row.get("trxid"), row.get("stmttrxid"))
            found.setdefault(key, []).append((position, row["relid"]))
    return found


def _apply_sql(
    record: dict[str, Any],
    history: LayoutHistory,
    ddl_relids: dict[tuple[Any, Any], list[tuple[int, int]]],
    position: int,
) -> None:
    rel_id = record["relid"]
    if rel_id is None:
        candidates = ddl_relids.get((record["trxid"], record["stmttrxid"]), [])
        if candidates:
            rel_id = min(candidates, key=lambda c: abs(c[0] - position))[1]
    try:
        statement = history.apply_sql(record["logaddr"], record["sql_text"], rel_id)
    except DecodeError as exc:
        record["decode_error"] = f"{exc.reason} (SQL at LOGADDR {record['logaddr_hex']})"
        return
    record["sql_kind"] = statement.kind
    if record["table_name"] is None and statement.table:
        record["table_schema"], record["table_name"] = statement.schema, statement.table
