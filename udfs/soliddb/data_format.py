"""The framing of SYS_LOG.DATA: logmart's interpretation, kept here and nowhere else.

solidDB's public documentation points to "DATA column format for row data" and "… for DDL data"
pages that are not public. ``../shared/specs/README.md`` interpretation 10 fills the gap; this
module is that interpretation, so a real capture can correct it in one place.

Row records (RECID 1 INSERT, 3 UPDATE, 4 DELETE_FULL, 5 UPDATE_BEFOREIMAGE)
    DATA = one *field* per column of the table, in column order. A field is
    ``lead (1 byte)``: ``0x00``-``0xFD`` is the length of the bytes that follow;
    ``0xFE`` means a 4-byte **little-endian** length follows, then the bytes;
    ``0xFF`` is not a length (reserved): the DATA is rejected.
    The field's bytes are the value in the encoding the spec's type table gives for the column's
    type (:data:`udfs.soliddb.layouts.TYPE_ENCODINGS`).

NULL
    A zero-length field is SQL NULL. logmart's refinement: in a NOT NULL character or binary
    column a zero-length field can only be the empty value (``''`` / empty binary), so it is read
    so; in a NOT NULL column of any other type it is a decode error (the framing is off).
    Consequence of the interpretation: a nullable VARCHAR holding ``''`` reads as NULL.

Fewer fields than columns
    The missing trailing columns are NULL with the reason ``not_in_record`` (a row logged before
    an ``ALTER TABLE … ADD COLUMN`` that the layout already includes); more fields than columns is
    a decode error (the layout lacks columns, so the values cannot be named).

DDL records (RECID 13)
    DATA = two fields: ``LOGRECID`` as a 4-byte MSB-first INTEGER, then ``INFO`` as character
    text (the object name the spec's DDL table describes), the same framing as a row of
    ``(LOGRECID INTEGER, INFO VARCHAR)``.

SQL records (RECID 6)
    DATA = one field: the SQL statement text (character). TEXTDATA stays NULL, as the spec says.
"""

from __future__ import annotations

from construct import (
    Bytes,
    Check,
    Computed,
    Const,
    GreedyRange,
    IfThenElse,
    Int8ub,
    Int32sb,
    Int32ul,
    Struct,
    Terminated,
    this,
)

from udfs.errors import DecodeError

SHORT_LENGTH_MAX = 0xFD
LONG_LENGTH_MARK = 0xFE
RESERVED_LEAD = 0xFF
LONG_LENGTH_SIZE = 4

# One field: the declarative description. Tests check it four ways, and check that the
# hand-written splitter below (the fast path, which also reports short data that construct's
# compiled form reads silently) agrees with it.
DATA_FIELD = Struct(
    "lead" / Int8ub,
    Check(this.lead != RESERVED_LEAD),
    "length" / IfThenElse(this.lead == LONG_LENGTH_MARK, Int32ul, Computed(this.lead)),
    "data" / Bytes(this.length),
)

# A row record's DATA: fields until the end (their count is the table layout's business).
ROW_DATA = Struct("fields" / GreedyRange(DATA_FIELD), Terminated)

# A DDL record's DATA: LOGRECID (a 4-byte field holding a 4-byte MSB-first integer), then INFO.
DDL_DATA = Struct(
    "logrecid_length" / Const(4, Int8ub),
    "logrecid" / Int32sb,
    "info" / DATA_FIELD,
    Terminated,
)

# An SQL record's DATA: the statement text as one field.
SQL_DATA = Struct("sql" / DATA_FIELD, Terminated)


def split_fields(data: bytes) -> list[bytes]:
    """DATA -> the bytes of each field, in order (``b""`` for a zero-length field).

    Raises DecodeError saying which field and byte offset is wrong.
    """
    fields: list[bytes] = []
    pos, end = 0, len(data)
    while pos < end:
        start, length = _field_extent(data, pos, len(fields) + 1)
        fields.append(bytes(data[start : start + length]))
        pos = start + length
    return fields


def _field_extent(data: bytes, pos: int, number: int) -> tuple[int, int]:
    """(start of the field's bytes, their length) for the field whose lead byte is at ``pos``."""
    lead = data[pos]
    if lead <= SHORT_LENGTH_MAX:
        start, length = pos + 1, lead
    elif lead == LONG_LENGTH_MARK:
        start = pos + 1 + LONG_LENGTH_SIZE
        if start > len(data):
            raise DecodeError(
                f"DATA field {number} at byte {pos}: the 4-byte length after 0xFE is cut short"
            )
        length = int.from_bytes(data[pos + 1 : start], "little")
    else:
        raise DecodeError(f"DATA field {number} at byte {pos}: length byte 0xFF is reserved")
    if start + length > len(data):
        raise DecodeError(
            f"DATA field {number} at byte {pos} says {length} bytes, "
            f"only {len(data) - start} remain"
        )
    return start, length


def frame_fields(values: list[bytes | None]) -> bytes:
    """The inverse of :func:`split_fields`: NULL (None) and empty values become a 0x00 field."""
    out = bytearray()
    for value in values:
        raw = value or b""
        if len(raw) <= SHORT_LENGTH_MAX:
            out.append(len(raw))
        else:
            out.append(LONG_LENGTH_MARK)
            out += len(raw).to_bytes(LONG_LENGTH_SIZE, "little")
        out += raw
    return bytes(out)


def field_value(raw: bytes, *, nullable: bool, empty_allowed: bool) -> bytes | None:
    """A field's value bytes, or None for SQL NULL (the zero-length rule above).

    ``empty_allowed``: the column's type has an empty value (character, binary).
    """
    if raw:
        return raw
    if nullable:
        return None
    if empty_allowed:
        return b""
    raise DecodeError("a zero-length field (NULL) in a NOT NULL column")


def split_ddl(data: bytes) -> tuple[int, bytes]:
    """DDL record DATA -> (LOGRECID, INFO bytes)."""
    fields = split_fields(data)
    if len(fields) != 2:
        raise DecodeError(f"DDL DATA holds {len(fields)} fields, expected 2 (LOGRECID, INFO)")
    logrecid, info = fields
    if len(logrecid) != 4:
        raise DecodeError(f"DDL LOGRECID field is {len(logrecid)} bytes, expected 4")
    return int.from_bytes(logrecid, "big", signed=True), info


def split_sql(data: bytes) -> bytes:
    """SQL record DATA -> the statement text's bytes."""
    fields = split_fields(data)
    if len(fields) != 1:
        raise DecodeError(f"SQL DATA holds {len(fields)} fields, expected 1 (the statement)")
    return fields[0]
