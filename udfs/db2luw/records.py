"""Decode one Db2 LUW log record (from its log manager header) into a flat dict.

:func:`decode_record` returns the same keys (:data:`RECORD_KEYS`) for every record, ``None``
where a key does not apply, so a Spark data source can give every record one schema. Row images
come back as bytes (``before_image`` / ``after_image``; ``images`` for insert multiple): turning
them into column values needs the table layout in force at the record's LSN, which is
:mod:`udfs.db2luw.rows`' job.

Hot path: fixed parts are read with ``struct.Struct`` formats derived from the construct layouts
(:func:`udfs.db2luw.layouts.fixed_format`), never with ``Struct.parse``.

Interpretations (see also ``docs/db2luw.md``):

* ``kind`` says what a record is for the marts: ``row_insert`` / ``row_delete`` /
  ``row_update``, ``undo_insert`` / ``undo_delete`` / ``undo_update`` (compensation records:
  they reverse an earlier change and are not row changes of their own), ``commit`` / ``abort``,
  ``ddl_<what>`` / ``undo_ddl_<what>``, ``out_of_row_start`` / ``undo_out_of_row_start``,
  ``lob_data``, and ``unknown`` for a function id or log manager record type logmart does not
  know (the header is decoded; the record is kept and counted, not rejected).
* An unknown *component* inside a normal or compensation record is an error: the record type
  promises a component record.
* Undo records carry the image they put back as ``after_image`` (111 undo delete, 166 undo
  delete to empty page, 112 undo update = the old image restored). Undo insert (110, 131, 168)
  carries only RIDs.
* Table space 0 is SYSCATSPACE, where the system catalog tables live: ``catalog_table`` is true
  for records on it; they are kept in staging but are not user row changes.
* Commit time is seconds since 1970 UTC rendered ``YYYY-MM-DD HH:MM:SS``; a commit body of just
  the 8-byte time (non-propagatable) has no authid (``None``).
* Fixed-size records (DDL, DOM) shorter than their spec table are errors; longer ones are kept
  with the extra bytes in ``payload`` and a ``note``. Row records must fit exactly: every image's
  length comes from its own record header and the images must end where the record ends.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from udfs.db2luw.layouts import (
    LOB_FIELD_TYPES,
    decimal_precision_scale,
    fixed_format,
)
from udfs.errors import DecodeError
from udfs.values import text

# --- names -------------------------------------------------------------------------------------

RECORD_TYPES = {
    0x004E: "normal",
    0x0043: "compensation",
    0x0084: "normal_commit",
    0x0041: "normal_abort",
    0x008A: "local_pending_list",
}
HEADER_FLAGS = {
    "redo_always": 0x0001,
    "propagatable": 0x0002,
    "temp_table": 0x0004,
    "singular_transaction": 0x0010,
    "runtime_rollback": 0x0200,
    "pseudo_compensation": 0x0800,
}
COMPONENTS = {1: "dms", 4: "dom", 5: "lob", 11: "rds"}
LRIUD_FLAGS = {  # Table 19
    "redistribute_or_load": 0x0200,
    "internal_temporal": 0x0400,
    "mqt_maintenance": 0x0800,
    "referential_integrity": 0x1000,
    "trigger": 0x2000,
    "set_integrity": 0x4000,
    "decomposed_update": 0x8000,
}
ALTER_ATTRIBUTES = {  # Table 13
    "propagation": 0x00000001,
    "check_pending": 0x00000002,
    "value_compression": 0x00000010,
    "append_mode": 0x00010000,
    "lf_propagation": 0x00200000,
}
PARTITION_ACTIONS = {  # Table 29
    1: "add_partition",
    2: "attach_partition",
    4: "set_integrity_after_attach",
    5: "detach_deferred_mqt",
    6: "detach_deferred_nonpartitioned_indexes",
    7: "detach_immediate_never_set_integrity",
    8: "detach_immediate",
    13: "detach_deferred_logically_detached",
    15: "detach_deferred_mqt",
    16: "detach_deferred_never_set_integrity",
    18: "detach_deferred_dependents_maintained",
    20: "detach_deferred_nonpartitioned_indexes",
    21: "detach_immediate_complete",
}
FIELD_TYPES = {  # Table 6, column descriptor array
    0x0000: "SMALLINT",
    0x0001: "INTEGER",
    0x0002: "DECIMAL",
    0x0003: "DOUBLE",
    0x0004: "REAL",
    0x0005: "BIGINT",
    0x0006: "DECFLOAT64",
    0x0007: "DECFLOAT128",
    0x0100: "CHAR",
    0x0101: "VARCHAR",
    0x0104: "LONG VARCHAR",
    0x0105: "DATE",
    0x0106: "TIME",
    0x0107: "TIMESTAMP",
    0x0108: "BLOB",
    0x0109: "CLOB",
    0x010D: "STRUCT",
    0x010F: "BOOLEAN",
    0x0110: "BINARY",
    0x0111: "VARBINARY",
    0x0112: "XMLTYPE",
    0x0200: "GRAPHIC",
    0x0201: "VARGRAPH",
    0x0202: "LONG VARG",
    0x0203: "DBCLOB",
}
NULL_FLAGS = {
    "isnull": 0x0001,
    "nonulls": 0x0002,
    "type_default": 0x0004,
    "user_default": 0x0008,
    "generated": 0x0040,
    "compress_system_default": 0x0080,
}
CATALOG_TABLE_SPACE = 0  # SYSCATSPACE

RECORD_KEYS = (
    # log manager header
    "record_length", "record_type", "record_type_name", "flags", *HEADER_FLAGS,
    "lsn", "lfs", "lso_previous", "tid", "log_stream_id", "header_length",
    "extra_log_stream_id", "compensation_lso", "extra_lso",
    # component record header
    "component", "component_identifier", "function_identifier", "function_name", "kind",
    "table_space_identifier", "table_identifier", "catalog_table",
    "object_table_space_identifier", "object_identifier", "object_type", "dom_flags",
    "rds_flags",
    # transaction manager
    "commit_time", "commit_time_epoch", "authid",
    # rows
    "lriudflags", *LRIUD_FLAGS, "rid", "new_rid", "free_space", "record_offset",
    "first_page_of_the_block", "pool_page_number", "row_count",
    "before_image", "after_image", "images", "rids",
    # DDL
    "file_create_lsn", "old_columns", "new_columns", "column_id",
    "alter_bit_mask", "alter_bit_values", "altered_attributes", "attributes_on",
    "master_table_space_identifier", "master_table_identifier", "data_partition_identifier",
    "partition_action", "partition_action_name", "index_token", "index_root_page",
    "long_tablespace_id", "index_tablespace_id", "index_object_id", "lf_object_id",
    "lob_object_id", "xml_object_id", "temporary_table_space_id",
    "long_temporary_table_space_id",
    # RDS DDL statement (Relation manager Table 3)
    "ddl_operation_identifier", "ddl_object_identifier", "ddl_options", "ddl_entries",
    "statement_text_left", "statement_text_length", "statement_text",
    # anything left undecoded
    "payload", "note",
)  # fmt: skip
_TEMPLATE = dict.fromkeys(RECORD_KEYS)

# --- fixed formats, derived from the layouts ---------------------------------------------------


class _Formats:
    """The ``struct.Struct``s of one byte order (built once per byte order)."""

    def __init__(self, byteorder: str):
        def fmt(name: str) -> struct.Struct:
            return fixed_format(name, byteorder)[0]

        self.byteorder = byteorder
        self.header = fmt("log_manager_header")
        self.compensation = fmt("compensation_extension")
        self.propagatable = fmt("propagatable_compensation_extension")
        self.dms = fmt("dms_log_record_header")
        self.dom = fmt("dom_log_record_header")
        self.rds = fmt("rds_log_record_header")
        self.record_header = fmt("record_header")
        self.insert = fmt("insert_record")
        self.rollback_insert = fmt("rollback_insert_record")
        self.empty_page = fmt("insert_record_to_empty_page")
        self.rollback_empty_page = fmt("rollback_insert_record_to_empty_page")
        self.multiple = fmt("insert_multiple_records")
        self.description = fmt("record_description")
        self.rollback_description = fmt("rollback_description")
        self.initialize = fmt("initialize_table")
        self.table_description = fmt("table_description_record")
        self.column = fmt("column_descriptor")
        self.lob = fmt("lob_column_descriptor")
        self.add_drop = fmt("add_drop_columns")
        self.alter_column = fmt("alter_column_attribute")
        self.alter_table = fmt("alter_table_attribute")
        self.partition = fmt("update_partition_state")
        self.index = fmt("create_drop_index")
        self.table = fmt("create_drop_table")
        self.anli = fmt("activate_not_logged_initially")
        self.reorg = fmt("reorg_table")
        self.ddl_statement = fmt("ddl_statement")
        self.ddl_entry = fmt("ddl_stmt_record_entry")
        self.text_lengths = struct.Struct(self.ddl_entry.format[0] + "II")
        self.commit = fmt("commit_time_only")
        self.authid_length = fmt("normal_abort")  # its leading fixed field: the u16 length
        self.filter = fmt("db2_read_log_filter_data")
        self.lsn_prefix = fmt("lsn_prefix")


_FORMATS: dict[str, _Formats] = {}


def formats(byteorder: str) -> _Formats:
    """The derived ``struct`` formats for ``byteorder`` (cached)."""
    found = _FORMATS.get(byteorder)
    if found is None:
        if byteorder not in ("little", "big"):
            raise DecodeError(f"byte order must be 'little' or 'big', got {byteorder!r}")
        found = _FORMATS[byteorder] = _Formats(byteorder)
    return found


# --- entry point -------------------------------------------------------------------------------


def decode_record(record: bytes, byteorder: str = "little") -> dict[str, Any]:
    """Decode one log record, starting at its log manager header, into a flat dict.

    Raises :class:`DecodeError` when the bytes are inconsistent (lengths that do not add up,
    an unknown component, a truncated structure).
    """
    f = formats(byteorder)
    out = dict(_TEMPLATE)
    header_length = _decode_header(record, f, out)
    body = memoryview(record)[header_length:]
    name = out["record_type_name"]
    if name in ("normal_commit", "local_pending_list"):
        _decode_commit(body, f, out)
    elif name == "normal_abort":
        _decode_abort(body, f, out)
    elif name in ("normal", "compensation"):
        _decode_component(body, f, out)
    else:
        out.update(kind="unknown", payload=bytes(body))
        out["note"] = f"log manager record type 0x{out['record_type']:04X} is not decoded"
    return out


def _decode_header(record: bytes, f: _Formats, out: dict) -> int:
    size = f.header.size
    if len(record) < size:
        raise DecodeError(
            f"log record of {len(record)} bytes is shorter than its {size}-byte header"
        )
    (length, rtype, flags, lsn, lfs, lso_prev, tid, stream) = f.header.unpack_from(record)
    if length != len(record):
        raise DecodeError(
            f"log manager header says record length {length} but the record has {len(record)} "
            "bytes (wrong byte order or framing?)"
        )
    out.update(
        record_length=length,
        record_type=rtype,
        record_type_name=RECORD_TYPES.get(rtype, "unknown"),
        flags=flags,
        lsn=lsn,
        lfs=lfs,
        lso_previous=lso_prev,
        tid=tid.hex(),
        log_stream_id=stream,
    )
    for flag, bit in HEADER_FLAGS.items():
        out[flag] = bool(flags & bit)
    if rtype == 0x0043:
        size = _decode_compensation_extension(record, f, out, size)
    out["header_length"] = size
    return size


def _decode_compensation_extension(record: bytes, f: _Formats, out: dict, at: int) -> int:
    end = at + f.compensation.size + (f.propagatable.size if out["propagatable"] else 0)
    if len(record) < end:
        raise DecodeError(f"compensation record of {len(record)} bytes has no room for its "
                          f"{end}-byte header")  # fmt: skip
    stream, _reserved, lso = f.compensation.unpack_from(record, at)
    out.update(extra_log_stream_id=stream, compensation_lso=lso)
    if out["propagatable"]:
        (out["extra_lso"],) = f.propagatable.unpack_from(record, at + f.compensation.size)
    return end


# --- transaction manager -----------------------------------------------------------------------


def _decode_commit(body: memoryview, f: _Formats, out: dict) -> None:
    out.update(component="transaction_manager", kind="commit")
    if len(body) < 8:
        raise DecodeError(f"commit record body of {len(body)} bytes has no 8-byte commit time")
    (seconds,) = f.commit.unpack_from(body)
    out.update(commit_time_epoch=seconds, commit_time=_utc_text(seconds))
    end = 8 if len(body) == 8 else _authid(body, 8, f, out)
    if out["record_type_name"] == "local_pending_list":
        out["payload"] = bytes(body[end:])
    elif end != len(body):
        raise DecodeError(f"commit record has {len(body) - end} bytes after its authid")


def _decode_abort(body: memoryview, f: _Formats, out: dict) -> None:
    out.update(component="transaction_manager", kind="abort")
    end = 0 if len(body) == 0 else _authid(body, 0, f, out)
    if end != len(body):
        raise DecodeError(f"abort record has {len(body) - end} bytes after its authid")


def _authid(body: memoryview, at: int, f: _Formats, out: dict) -> int:
    if len(body) < at + 2:
        raise DecodeError("transaction manager record is cut inside its authid length")
    (length,) = f.authid_length.unpack_from(body, at)
    end = at + 2 + length
    if len(body) < end:
        raise DecodeError(f"authid length {length} runs past the end of the record")
    out["authid"] = text(bytes(body[at + 2 : end]), "utf-8").rstrip(" \x00")
    return end


def _utc_text(seconds: int) -> str:
    try:
        stamp = dt.datetime.fromtimestamp(seconds, dt.UTC)
    except (OverflowError, OSError, ValueError):
        raise DecodeError(f"commit time {seconds} is not a valid time in seconds since 1970")
    return stamp.strftime("%Y-%m-%d %H:%M:%S")


# --- component records -------------------------------------------------------------------------


def _decode_component(body: memoryview, f: _Formats, out: dict) -> None:
    if len(body) < 2:
        raise DecodeError(f"component record of {len(body)} bytes is too short for its header")
    component = body[0]
    name = COMPONENTS.get(component)
    if name is None:
        raise DecodeError(f"unknown component identifier {component} in a {out['record_type_name']}"
                          " record (DMS 1, DOM 4, LOB 5, RDS 11 are known)")  # fmt: skip
    out.update(component=name, component_identifier=component, function_identifier=body[1])
    if name == "dms":
        _need(body, f.dms.size, "DMS log record header")
        _, _, tablespace, table = f.dms.unpack_from(body)
        _set_table(out, tablespace, table)
        _dispatch(DMS_FUNCTIONS, body, f, out)
    elif name == "dom":
        _need(body, f.dom.size, "DOM log record header")
        _, _, obj_ts, obj_id, tablespace, table, obj_type, dom_flags = f.dom.unpack_from(body)
        _set_table(out, tablespace, table)
        out.update(object_table_space_identifier=obj_ts, object_identifier=obj_id,
                   object_type=obj_type, dom_flags=dom_flags)  # fmt: skip
        _dispatch(DOM_FUNCTIONS, body, f, out)
    elif name == "rds":
        _need(body, f.rds.size, "RDS log record header")
        _, _, tablespace, table, rds_flags = f.rds.unpack_from(body)
        _set_table(out, tablespace, table)
        out["rds_flags"] = rds_flags
        _dispatch(RDS_FUNCTIONS, body, f, out)
    else:  # LOB manager records: kept whole; their layout is not in the specs
        out.update(function_name="lob", kind="lob_data", payload=bytes(body[2:]))


def _set_table(out: dict, tablespace: int, table: int) -> None:
    out.update(table_space_identifier=tablespace, table_identifier=table,
               catalog_table=tablespace == CATALOG_TABLE_SPACE)  # fmt: skip


def _dispatch(functions: dict, body: memoryview, f: _Formats, out: dict) -> None:
    entry = functions.get(out["function_identifier"])
    if entry is None:
        out.update(function_name="unknown", kind="unknown", payload=bytes(body))
        out["note"] = (f"{out['component'].upper()} function {out['function_identifier']} "
                       "is not decoded")  # fmt: skip
        return
    function_name, kind, decoder = entry
    if out["record_type_name"] == "compensation" and kind.startswith("ddl_"):
        kind = "undo_" + kind  # e.g. alter table attribute written while rolling back
    out.update(function_name=function_name, kind=kind)
    decoder(body, f, out)


def _need(body: memoryview, size: int, what: str) -> None:
    if len(body) < size:
        raise DecodeError(f"{what} needs {size} bytes, the record has {len(body)}")


def _fixed(body: memoryview, fmt: struct.Struct, out: dict, what: str) -> tuple:
    """Unpack a fixed-size record; extra bytes are kept in ``payload`` with a note."""
    _need(body, fmt.size, what)
    if len(body) > fmt.size:
        out["payload"] = bytes(body[fmt.size :])
        out["note"] = f"{len(body) - fmt.size} bytes beyond the spec's {fmt.size}-byte {what}"
    return fmt.unpack_from(body)


# --- DMS row records -----------------------------------------------------------------------------


def _image(body: memoryview, at: int, f: _Formats, what: str) -> tuple[bytes, int]:
    """One record header + data at ``at``: its length is the record header's record length."""
    if len(body) < at + 4:
        raise DecodeError(f"{what}: record header cut off at byte {at} of {len(body)}")
    length = f.record_header.unpack_from(body, at)[2]
    if length < 4:
        raise DecodeError(f"{what}: record header says length {length}, less than the header")
    end = at + length
    if end > len(body):
        raise DecodeError(f"{what}: record header says {length} bytes but {len(body) - at} remain")
    return bytes(body[at:end]), end


def _lriud(out: dict, flags: int) -> None:
    out["lriudflags"] = flags
    for name, bit in LRIUD_FLAGS.items():
        out[name] = bool(flags & bit)


def _expect_end(body: memoryview, end: int, what: str) -> None:
    if end != len(body):
        raise DecodeError(f"{what} ends at byte {end} but the record has {len(body)} bytes")


def _insert_like(image_key: str) -> Callable[[memoryview, _Formats, dict], None]:
    """Table 17 records (162, 161, 111, 112): the image goes to ``image_key``."""

    def decode(body: memoryview, f: _Formats, out: dict) -> None:
        _need(body, f.insert.size, out["function_name"])
        *_, lriud, _length, free, rid, offset = f.insert.unpack_from(body)
        _lriud(out, lriud)
        out.update(rid=rid.hex(), free_space=free, record_offset=offset, row_count=1)
        out[image_key], end = _image(body, f.insert.size, f, out["function_name"])
        _expect_end(body, end, out["function_name"])

    return decode


def _update(body: memoryview, f: _Formats, out: dict) -> None:
    """163: old half (Table 17 shape), a second DMS header, new half."""
    _need(body, f.insert.size, "update record")
    *_, lriud, _length, free, rid, offset = f.insert.unpack_from(body)
    _lriud(out, lriud)
    out.update(rid=rid.hex(), free_space=free, record_offset=offset, row_count=1)
    out["before_image"], at = _image(body, f.insert.size, f, "update record old image")
    second = body[at:]
    _need(second, f.insert.size, "update record new half")
    if second[0] != 1:
        raise DecodeError(f"update record's second half starts with component {second[0]}, not "
                          "the DMS header (1) it should")  # fmt: skip
    new_rid = f.insert.unpack_from(second)[7]
    out["new_rid"] = new_rid.hex()
    out["after_image"], end = _image(second, f.insert.size, f, "update record new image")
    _expect_end(second, end, "update record")


def _rollback_insert(body: memoryview, f: _Formats, out: dict) -> None:
    """110: no image, only the RID of the row the undo removes."""
    *_, _internal, _length, free, rid = _fixed(body, f.rollback_insert, out, "undo insert")
    out.update(rid=rid.hex(), free_space=free, row_count=1)


def _empty_page(image_key: str, has_lriud: bool) -> Callable[[memoryview, _Formats, dict], None]:
    """Tables 20/21 (165, 164, 166): MDC records with the first page of the block."""

    def decode(body: memoryview, f: _Formats, out: dict) -> None:
        _need(body, f.empty_page.size, out["function_name"])
        *_, lriud, _length, free, rid, _internal, first_page, offset = f.empty_page.unpack_from(
            body
        )
        if has_lriud:
            _lriud(out, lriud)
        out.update(rid=rid.hex(), free_space=free, record_offset=offset, row_count=1,
                   first_page_of_the_block=first_page)  # fmt: skip
        out[image_key], end = _image(body, f.empty_page.size, f, out["function_name"])
        _expect_end(body, end, out["function_name"])

    return decode


def _rollback_empty_page(body: memoryview, f: _Formats, out: dict) -> None:
    """131 (Table 18)."""
    fields = _fixed(body, f.rollback_empty_page, out, "undo insert record to empty page")
    *_, lriud, _length, free, rid, _internal, first_page = fields
    _lriud(out, lriud)
    out.update(rid=rid.hex(), free_space=free, row_count=1, first_page_of_the_block=first_page)


def _insert_multiple(body: memoryview, f: _Formats, out: dict) -> None:
    """167 (Tables 25/26): several RID + record offset + image descriptions."""
    count, free, total, pool_page = _multiple_head(body, f, out)
    images, rids, at = [], [], f.multiple.size
    for number in range(count):
        what = f"insert multiple records, record {number + 1} of {count}"
        _need(body[at:], f.description.size, what)
        rid, _offset = f.description.unpack_from(body, at)
        image, at = _image(body, at + f.description.size, f, what)
        images.append(image)
        rids.append(rid.hex())
    _expect_end(body, at, "insert multiple records")
    held = sum(len(image) for image in images)
    if held != total:
        # Table 25 names "Sum of record lengths" but not what it sums (the images? with their
        # 8-byte descriptions? padded?). Every row has decoded from its own record header and the
        # record ends where the last one does, so a different total is a note, not a failure.
        out["note"] = (
            f"insert multiple records: sum of record lengths says {total}, the record headers "
            f"hold {held} bytes; rows decoded by their own lengths"
        )
    out.update(images=images, rids=rids, row_count=count, free_space=free,
               pool_page_number=pool_page, after_image=images[0] if images else None,
               rid=rids[0] if rids else None)  # fmt: skip


def _undo_insert_multiple(body: memoryview, f: _Formats, out: dict) -> None:
    """168 (Tables 25/27): RID + record offset per record undone."""
    count, free, _total, pool_page = _multiple_head(body, f, out)
    size = f.rollback_description.size
    _expect_end(body, f.multiple.size + count * size, "undo insert multiple records")
    rids = [
        f.rollback_description.unpack_from(body, f.multiple.size + i * size)[0].hex()
        for i in range(count)
    ]
    out.update(rids=rids, row_count=count, free_space=free, pool_page_number=pool_page,
               rid=rids[0] if rids else None)  # fmt: skip


def _multiple_head(body: memoryview, f: _Formats, out: dict) -> tuple[int, int, int, int]:
    _need(body, f.multiple.size, out["function_name"])
    *_, _padding, count, free, total, _variable, pool_page = f.multiple.unpack_from(body)
    return count, free, total, pool_page


# --- DMS DDL records -----------------------------------------------------------------------------


def column_descriptors(
    data: memoryview | bytes, at: int, count: int, f: _Formats, what: str
) -> tuple[list[dict], int]:
    """``count`` column descriptors then their LOB descriptors, from ``at``; returns the end."""
    end = at + count * f.column.size
    if len(data) < end:
        raise DecodeError(f"{what}: {count} column descriptors need {end - at} bytes, "
                          f"{len(data) - at} remain")  # fmt: skip
    columns = [_column(*f.column.unpack_from(data, at + i * 8), f) for i in range(count)]
    for column in columns:
        if column["field_type"] in LOB_FIELD_TYPES:
            if len(data) < end + f.lob.size:
                raise DecodeError(f"{what}: LOB descriptor of column {column['field_type']:#06x} "
                                  "is cut off")  # fmt: skip
            length, inline, logged, _ = f.lob.unpack_from(data, end)
            column.update(lob_length=length, lob_inline_length=inline, lob_logged=bool(logged))
            end += f.lob.size
    return columns, end


def _column(field_type: int, length: int, null_flag: int, offset: int, f: _Formats) -> dict:
    precision = scale = None
    if field_type == 0x0002:
        precision, scale = decimal_precision_scale(length, f.byteorder)
    return {
        "field_type": field_type,
        "type_name": FIELD_TYPES.get(field_type, f"UNKNOWN_{field_type:#06x}"),
        "length": length,
        "precision": precision,
        "scale": scale,
        "null_flag": null_flag,
        "nullable": bool(null_flag & NULL_FLAGS["isnull"]),
        "compress_system_default": bool(null_flag & NULL_FLAGS["compress_system_default"]),
        "field_offset": offset,
        "lob_length": None,
        "lob_inline_length": None,
        "lob_logged": None,
    }


def _initialize_table(body: memoryview, f: _Formats, out: dict) -> None:
    """128 (Tables 5/6): the table description record with its column and LOB descriptors."""
    _need(body, f.initialize.size, "initialize table record")
    *_, file_create_lsn, _internal, description_length = f.initialize.unpack_from(body)
    out["file_create_lsn"] = file_create_lsn
    description = body[f.initialize.size :]
    if description_length != len(description):
        raise DecodeError(f"initialize table: table description length says {description_length}"
                          f", the record holds {len(description)} bytes")  # fmt: skip
    _need(description, f.table_description.size, "table description record")
    _type, _internal, count = f.table_description.unpack_from(description)
    columns, end = column_descriptors(description, 4, count, f, "table description record")
    _expect_end(description, end, "table description record")
    out["new_columns"] = columns


def _add_drop_columns(body: memoryview, f: _Formats, out: dict) -> None:
    """102/104/169/170 (Table 14): old then new parallel arrays."""
    _need(body, f.add_drop.size, out["function_name"])
    *_, _internal, old_count, new_count = f.add_drop.unpack_from(body)
    what = out["function_name"]
    out["old_columns"], at = column_descriptors(body, f.add_drop.size, old_count, f, what)
    out["new_columns"], end = column_descriptors(body, at, new_count, f, what)
    _expect_end(body, end, what)


def _alter_column(body: memoryview, f: _Formats, out: dict) -> None:
    """113/115/116/119 (Tables 15/16): one column, old and new descriptor."""
    fields = _fixed(body, f.alter_column, out, "alter column attribute record")
    column_id, old, new = fields[4], fields[5:9], fields[9:13]
    out.update(column_id=column_id, old_columns=[_column(*old, f)], new_columns=[_column(*new, f)])


def _alter_table(body: memoryview, f: _Formats, out: dict) -> None:
    """124 (Table 13): named attribute bits altered, and which of them are now on."""
    *_, mask, values = _fixed(body, f.alter_table, out, "alter table attribute record")
    out.update(
        alter_bit_mask=mask,
        alter_bit_values=values,
        altered_attributes=[name for name, bit in ALTER_ATTRIBUTES.items() if mask & bit],
        attributes_on=[name for name, bit in ALTER_ATTRIBUTES.items() if mask & values & bit],
    )


def _header_only(body: memoryview, f: _Formats, out: dict) -> None:
    """122/123 rename, 211/212 out-of-row start: the 6-byte DMS header is the whole record."""
    _fixed(body, f.dms, out, out["function_name"].replace("_", " ") + " record")


def _partition_state(body: memoryview, f: _Formats, out: dict) -> None:
    """137/108 (Tables 28/29)."""
    fields = _fixed(body, f.partition, out, "update partition state record")
    *_, master_ts, master_table, _i, partition, _i2, _i3, action = fields
    out.update(master_table_space_identifier=master_ts, master_table_identifier=master_table,
               data_partition_identifier=partition, partition_action=action,
               partition_action_name=PARTITION_ACTIONS.get(action, "unknown"))  # fmt: skip


# --- DOM and RDS records -------------------------------------------------------------------------


def _index(body: memoryview, f: _Formats, out: dict) -> None:
    """DOM 2/3 (Table 11)."""
    *_, _internal, token, root_page = _fixed(body, f.index, out, "create/drop index record")
    out.update(index_token=token, index_root_page=root_page)


def _table(body: memoryview, f: _Formats, out: dict) -> None:
    """DOM 101/4/130/5 (Table 12): only internal bytes after the header."""
    _fixed(body, f.table, out, "create/drop table record")


def _truncate(body: memoryview, f: _Formats, out: dict) -> None:
    """DOM 11 (Table 7): the table in the header is re-initialized (no rows)."""
    _need(body, f.dom.size, "truncate record")


def _anli(body: memoryview, f: _Formats, out: dict) -> None:
    """DOM 12 (Table 8)."""
    fields = _fixed(body, f.anli, out, "activate not logged initially record")
    names = ("long_tablespace_id", "index_tablespace_id", "index_object_id", "lf_object_id",
             "lob_object_id", "xml_object_id")  # fmt: skip
    out.update(zip(names, fields[-6:], strict=True))


def _reorg(body: memoryview, f: _Formats, out: dict) -> None:
    """DOM 35 (Table 10)."""
    *_, token, temp_ts, long_temp_ts = _fixed(body, f.reorg, out, "reorg table record")
    out.update(index_token=token, temporary_table_space_id=temp_ts,
               long_temporary_table_space_id=long_temp_ts)  # fmt: skip


def _rds_statement(body: memoryview, f: _Formats, out: dict) -> None:
    """RDS 4/5 (Relation manager Table 3; reading in ``layouts``' module doc): the 16-byte
    fixed part, NumEntries DDLStmtRecordEntry (u16 type, u16 length), the entry texts, u32 text
    left, u32 text length, then this record's piece of the statement text (the rest).

    ``statement_text`` is the piece as bytes: a statement too long for one record is split over
    several ("each of which includes the total length of the statement and the length of the
    remaining text"), so a multi-byte character may straddle two pieces; :func:`ddl_statements`
    puts them back together before decoding.
    """
    _need(body, f.ddl_statement.size, "DDL statement record")
    *_, operation, obj, options, count = f.ddl_statement.unpack_from(body)
    at = f.ddl_statement.size
    _need(body, at + count * f.ddl_entry.size, "DDL statement record entries")
    entries = [f.ddl_entry.unpack_from(body, at + i * f.ddl_entry.size) for i in range(count)]
    at += count * f.ddl_entry.size
    texts = []
    for entry_type, length in entries:
        _need(body, at + length, f"DDL statement record entry text of type {entry_type}")
        raw = bytes(body[at : at + length])
        texts.append({"entry_type": entry_type,
                      "entry_text": raw.decode("utf-8", "replace").rstrip(" \x00")})  # fmt: skip
        at += length
    _need(body, at + f.text_lengths.size, "DDL statement text left and length")
    left, total = f.text_lengths.unpack_from(body, at)
    piece = bytes(body[at + f.text_lengths.size :])
    if not len(piece) <= left <= total:
        raise DecodeError(f"DDL statement record holds {len(piece)} bytes of text, but says "
                          f"{left} are left of a {total}-byte statement")  # fmt: skip
    out.update(ddl_operation_identifier=operation, ddl_object_identifier=obj, ddl_options=options,
               ddl_entries=texts, statement_text_left=left, statement_text_length=total,
               statement_text=piece)  # fmt: skip


class DdlStatement(NamedTuple):
    """One DDL statement put together from its RDS records (:func:`ddl_statements`)."""

    tid: str
    lsn: int  # of the record holding the statement's first piece
    text: str | None  # None when a piece is missing (``complete`` False)
    complete: bool
    lsns: tuple[int, ...]  # every record of the statement


def ddl_statements(records: list[dict], codec: str = "utf-8") -> list[DdlStatement]:
    """The DDL statements of decoded RDS 4 records (any order), one per statement.

    A record whose ``statement_text_left`` equals ``statement_text_length`` starts a statement;
    the records of the same transaction after it (log order) continue it while they hold the
    same total length and their text left is the previous one's minus the previous piece. The
    text is decoded (``codec``, the database code page) once the pieces are joined; a statement
    whose pieces do not add up to its total is ``complete=False`` with no text.
    """
    pieces = sorted((r for r in records if r.get("kind") == "ddl_statement"),
                    key=lambda r: (r["tid"], r["lsn"]))  # fmt: skip
    out: list[DdlStatement] = []
    open_by_tid: dict[str, list[dict]] = {}

    def close(tid: str) -> None:
        parts = open_by_tid.pop(tid, None)
        if not parts:
            return
        joined = b"".join(part["statement_text"] for part in parts)
        complete = len(joined) == parts[0]["statement_text_length"]
        text = joined.decode(codec, "replace") if complete else None
        out.append(DdlStatement(tid, parts[0]["lsn"], text, complete,
                                tuple(part["lsn"] for part in parts)))  # fmt: skip

    for record in pieces:
        tid, parts = record["tid"], open_by_tid.get(record["tid"])
        if record["statement_text_left"] == record["statement_text_length"] or not parts:
            close(tid)
            open_by_tid[tid] = [record]
            continue
        last = parts[-1]
        if (record["statement_text_length"] == last["statement_text_length"]
                and record["statement_text_left"]
                == last["statement_text_left"] - len(last["statement_text"])):  # fmt: skip
            parts.append(record)
        else:
            close(tid)
            open_by_tid[tid] = [record]
    for tid in list(open_by_tid):
        close(tid)
    return sorted(out, key=lambda statement: statement.lsn)


DMS_FUNCTIONS: dict[int, tuple[str, str, Callable]] = {
    162: ("insert_record", "row_insert", _insert_like("after_image")),
    161: ("delete_record", "row_delete", _insert_like("before_image")),
    163: ("update_record", "row_update", _update),
    110: ("undo_insert_record", "undo_insert", _rollback_insert),
    111: ("undo_delete_record", "undo_delete", _insert_like("after_image")),
    112: ("undo_update_record", "undo_update", _insert_like("after_image")),
    165: ("insert_record_to_empty_page", "row_insert", _empty_page("after_image", True)),
    164: ("delete_record_to_empty_page", "row_delete", _empty_page("before_image", False)),
    166: ("undo_delete_record_to_empty_page", "undo_delete", _empty_page("after_image", False)),
    131: ("undo_insert_record_to_empty_page", "undo_insert", _rollback_empty_page),
    167: ("insert_multiple_records", "row_insert", _insert_multiple),
    168: ("undo_insert_multiple_records", "undo_insert", _undo_insert_multiple),
    128: ("initialize_table", "ddl_initialize_table", _initialize_table),
    102: ("add_columns", "ddl_add_columns", _add_drop_columns),
    104: ("undo_add_columns", "undo_ddl_add_columns", _add_drop_columns),
    169: ("drop_columns", "ddl_drop_columns", _add_drop_columns),
    170: ("undo_drop_columns", "undo_ddl_drop_columns", _add_drop_columns),
    113: ("alter_column_attribute", "ddl_alter_column", _alter_column),
    115: ("undo_alter_column_attribute", "undo_ddl_alter_column", _alter_column),
    116: ("alter_lob_column_attribute", "ddl_alter_column", _alter_column),
    119: ("undo_alter_lob_column_attribute", "undo_ddl_alter_column", _alter_column),
    124: ("alter_table_attribute", "ddl_alter_table", _alter_table),
    122: ("rename_table_or_schema", "ddl_rename", _header_only),
    123: ("undo_rename_table_or_schema", "undo_ddl_rename", _header_only),
    137: ("update_partition_state", "ddl_partition_state", _partition_state),
    108: ("undo_update_partition_state", "undo_ddl_partition_state", _partition_state),
    211: ("start_of_out_of_row_data", "out_of_row_start", _header_only),
    212: ("undo_start_of_out_of_row_data", "undo_out_of_row_start", _header_only),
}
DOM_FUNCTIONS: dict[int, tuple[str, str, Callable]] = {
    2: ("create_index", "ddl_create_index", _index),
    3: ("drop_index", "ddl_drop_index", _index),
    4: ("drop_table", "ddl_drop_table", _table),
    5: ("undo_drop_table", "undo_ddl_drop_table", _table),
    11: ("truncate_table", "ddl_truncate", _truncate),
    12: ("activate_not_logged_initially", "ddl_activate_not_logged_initially", _anli),
    35: ("reorg_table", "ddl_reorg", _reorg),
    101: ("create_table", "ddl_create_table", _table),
    130: ("undo_create_table", "undo_ddl_create_table", _table),
}
RDS_FUNCTIONS: dict[int, tuple[str, str, Callable]] = {
    4: ("ddl_statement", "ddl_statement", _rds_statement),
    5: ("undo_ddl_statement", "undo_ddl_statement", _rds_statement),
}
ROW_KINDS = frozenset(("row_insert", "row_delete", "row_update"))
UNDO_ROW_KINDS = frozenset(("undo_insert", "undo_delete", "undo_update"))


# --- db2ReadLog output buffers -----------------------------------------------------------------


class FramedRecord(NamedTuple):
    """One record of a db2ReadLog output buffer."""

    offset: int  # byte offset of the framing prefix in the buffer
    prefix_length: int  # 56 (filter data) or 8 (LSN)
    record: bytes  # the log record, from its log manager header
    lsn: int  # from the prefix
    lfs: int | None  # from the filter data (recordLRIType1 part1)
    sqlcode: int  # non-zero: Db2 could not decompress the record


FRAMINGS = ("filter", "lsn")


def iter_log_records(
    data: bytes, framing: str = "filter", byteorder: str = "little"
) -> Iterator[FramedRecord]:
    """Split a db2ReadLog output buffer into records, checking the framing as it goes.

    ``framing='filter'``: each record preceded by the 56-byte db2ReadLogFilterData (its
    ``real_log_rec_len`` and LSN must match the record's own header); ``'lsn'``: by an 8-byte
    LSN (db2ReadLogNoConn), which must equal the header's LSN. A mismatch raises DecodeError
    saying which setting looks wrong, instead of decoding garbage.
    """
    f = formats(byteorder)
    if framing not in FRAMINGS:
        raise DecodeError(f"framing must be one of {FRAMINGS}, got {framing!r}")
    view, at = memoryview(data), 0
    while at < len(view):
        framed = _frame(view, at, f, framing, hint=True)
        yield framed
        at += framed.prefix_length + len(framed.record)


def _frame(view: memoryview, at: int, f: _Formats, framing: str, hint: bool) -> FramedRecord:
    try:
        if framing == "filter":
            return _filter_framed(view, at, f)
        return _lsn_framed(view, at, f)
    except DecodeError as exc:
        if not hint:
            raise
        raise DecodeError(f"{exc.reason}: {_framing_hint(view, at, f.byteorder, framing)}",
                          offset=at)  # fmt: skip


def _filter_framed(view: memoryview, at: int, f: _Formats) -> FramedRecord:
    if len(view) - at < f.filter.size + f.header.size:
        raise DecodeError(f"{len(view) - at} bytes left: too few for filter data and a header",
                          offset=at)  # fmt: skip
    _t1, lfs, lsn, _t2, _p1, _p2, real_length, sqlcode = f.filter.unpack_from(view, at)
    start = at + f.filter.size
    header_length, header_lsn = _header_length_lsn(view, start, f)
    if real_length != header_length or lsn != header_lsn or start + real_length > len(view):
        raise DecodeError(
            f"db2ReadLogFilterData does not fit the record after it (realLogRecLen {real_length},"
            f" header length {header_length}, LSN {lsn} vs {header_lsn})",
            offset=at,
        )
    return FramedRecord(at, f.filter.size, bytes(view[start : start + real_length]), lsn, lfs,
                        sqlcode)  # fmt: skip


def _lsn_framed(view: memoryview, at: int, f: _Formats) -> FramedRecord:
    if len(view) - at < f.lsn_prefix.size + f.header.size:
        raise DecodeError(f"{len(view) - at} bytes left: too few for an LSN and a header",
                          offset=at)  # fmt: skip
    (lsn,) = f.lsn_prefix.unpack_from(view, at)
    start = at + f.lsn_prefix.size
    length, header_lsn = _header_length_lsn(view, start, f)
    if lsn != header_lsn or length < f.header.size or start + length > len(view):
        raise DecodeError(
            f"8-byte LSN prefix {lsn} does not match the record after it (LSN {header_lsn}, "
            f"length {length})",
            offset=at,
        )
    return FramedRecord(at, f.lsn_prefix.size, bytes(view[start : start + length]), lsn, None, 0)


def _header_length_lsn(view: memoryview, at: int, f: _Formats) -> tuple[int, int]:
    fields = f.header.unpack_from(view, at)
    return fields[0], fields[3]


def _framing_hint(view: memoryview, at: int, byteorder: str, framing: str) -> str:
    """Say which framing/byte order the bytes do fit, if any."""
    for other_order in ("little", "big"):
        for other_framing in FRAMINGS:
            if (other_order, other_framing) == (byteorder, framing):
                continue
            try:
                _frame(view, at, formats(other_order), other_framing, hint=False)
            except DecodeError:
                continue
            return f"the bytes fit framing={other_framing!r} byteorder={other_order!r}"
    return f"check the framing ({framing!r}) and byte order ({byteorder!r}) settings"
