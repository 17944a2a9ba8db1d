"""Log Master records that are not row changes (CHANGE TYPE CO, CM, SC, E): what their DATA says.

DATA starts with ``u16 total length including itself`` (003_… "DATA"). Then:

* **E** (exchange, spec): ``u16 owner length``, owner of the clone table, ``u16 name length``,
  name of the clone table; character fields in the extract's EBCDIC code page.
* **CO, CM, SC** (catalog object = DDL information, Db2 command, status change): the spec does
  not describe their content (the pages "DATA column format … for DDL data" are not public).
  logmart reads it as ``u16 text length`` then the text in the extract's EBCDIC code page (a
  DDL statement, a command, a status message), and says why when the bytes do not fit that
  reading; the record's hex stays in ``int_logmaster_catalog_events_extracted``.

Used by ``int_logmaster_schema_changes_standardized`` through the SQL function
``logmart_logmaster_catalog_event`` (udfs/spark_udfs.py).
"""

from __future__ import annotations

import struct

import pyarrow as pa

from udfs import values
from udfs.errors import DecodeError

CATALOG_EVENT_TYPE = "struct<text: string, clone_owner: string, clone_name: string, error: string>"
_CATALOG_EVENT_ARROW = pa.struct(
    [
        ("text", pa.string()),
        ("clone_owner", pa.string()),
        ("clone_name", pa.string()),
        ("error", pa.string()),
    ]
)
TEXT_TYPES = ("CO", "CM", "SC")


def _u16(data: bytes, offset: int, what: str) -> int:
    if offset + 2 > len(data):
        raise DecodeError(f"DATA ends at byte {len(data)}, before the {what} at offset {offset}")
    return struct.unpack_from(">H", data, offset)[0]


def _field(data: bytes, offset: int, what: str, codec: str) -> tuple[str, int]:
    """A ``u16 length`` + characters field at ``offset``; its text and the offset after it."""
    length = _u16(data, offset, f"length of the {what}")
    start, end = offset + 2, offset + 2 + length
    if end > len(data):
        raise DecodeError(
            f"the {what} is {length} bytes long at offset {start}, past the end of DATA "
            f"({len(data)} bytes)"
        )
    return values.text(data[start:end], codec), end


def catalog_event(data: bytes | None, change_type: str | None, codec: str) -> dict:
    """The text (CO/CM/SC) or the clone table (E) a catalog event's DATA holds."""
    out: dict = {"text": None, "clone_owner": None, "clone_name": None, "error": None}
    kind = (change_type or "").strip()
    if data is None:
        out["error"] = "the record has no DATA"
        return out
    try:
        total = _u16(data, 0, "total length")
        if total != len(data):
            raise DecodeError(f"DATA says it is {total} bytes long but holds {len(data)}")
        if kind == "E":
            out["clone_owner"], end = _field(data, 2, "clone table owner", codec)
            out["clone_name"], end = _field(data, end, "clone table name", codec)
        elif kind in TEXT_TYPES:
            out["text"], end = _field(data, 2, "text", codec)
        else:
            raise DecodeError(f"CHANGE TYPE {kind!r} is not a catalog event")
        if end != len(data):
            raise DecodeError(f"{len(data) - end} bytes are left after the content, at {end}")
    except DecodeError as exc:
        out.update(text=None, clone_owner=None, clone_name=None)
        out["error"] = f"{kind or '?'} DATA not read: {exc}"
    return out


def catalog_event_arrow(data: pa.Array, change_type: pa.Array, codepage: pa.Array) -> pa.Array:
    """Spark Arrow UDF body; ``codepage`` is a Python codec name or ``ccsid:<n>`` per row."""
    rows = []
    for raw, kind, page in zip(
        data.to_pylist(), change_type.to_pylist(), codepage.to_pylist(), strict=True
    ):
        try:
            codec = values.check_codec(_codec(page))
        except DecodeError as exc:
            rows.append({"text": None, "clone_owner": None, "clone_name": None, "error": str(exc)})
            continue
        rows.append(catalog_event(raw, kind, codec))
    return pa.array(rows, _CATALOG_EVENT_ARROW)


def _codec(page: str | None) -> str:
    """The codec a code page setting names: ``ccsid:<n>`` (or nothing) = that EBCDIC CCSID's."""
    if not page or page.startswith("ccsid:"):
        return values.ebcdic_codec((page or "").removeprefix("ccsid:"))
    return page
