"""Db2 LUW log record layouts: one construct ``Struct`` per spec table, built for a byte order.

Sources: ``../shared/specs/002_…`` (data manager records, Tables 1-31) and the Db2 LUW facts in
``../shared/specs/README.md`` (log manager header, transaction manager records, record 163,
db2ReadLog framing). Field names are the spec's descriptions in lower_snake case; offsets follow
the spec tables (offsets count from the end of the log manager header, as the spec's note says).

Every multi-byte integer is in the **database server's byte order**, so nothing here is
little-endian by assumption: ``layouts("little")`` / ``layouts("big")`` build the same Structs
with ``Int16ul``/``Int16ub`` etc. Hot paths do not call ``Struct.parse``: :func:`fixed_format`
derives a precompiled ``struct.Struct`` from a Struct's leading fixed-size fields, so the
construct layout stays the single description of each record.

Interpretations where the spec is silent or inconsistent (also in ``docs/db2luw.md``):

* Table 17 (insert/delete) calls the u16 at offset 8 "Internal"; the README's real Db2 10.x
  record shows it holds the record length (466), as Table 20 names it: ``record_length``.
  Update (163) halves are read the same way.
* Table 9 (undo insert, 110) says "Total Length: 16 bytes" but its fields end at 18 (RID 12(6)):
  offsets win, the record is 18 bytes.
* Column descriptor ``length`` of a DECIMAL is two bytes, precision then scale, by position (not
  a u16 in the server's byte order); the layout reads a u16 and :func:`decimal_precision_scale`
  splits it back into those two bytes.
* Add/drop columns (Table 14) and the table description record (Table 6): the LOB descriptor
  array holds one 12-byte element per BLOB/CLOB/DBCLOB/structured column of the array before it.
* The compensation header extension's u64 (README: ``48 u64 LSO``) is read as the undo-next LSO
  (ARIES: the LSO of the record of this transaction to undo after this one); the 8 further bytes
  of a propagatable compensation record are kept, uninterpreted, as ``extra_lso``.
* RDS DDL statement records (function 4, undo 5) follow Table 3 of IBM's Db2 11.5 page
  "Relation manager log records" (not in ``002_…``; the README gives only the RDS header). That
  table gives the entries an offset (16, NumEntries * 4 bytes) but "DDL statement text left"
  and "DDL statement text length" only "variable(4)": they cannot precede the entries at a
  fixed 16, so they are read after the entry texts, right before the statement text (the only
  variable offset that leaves the entries at 16). Table 6 (DDLStmtRecordEntry, 4 bytes) is not
  in the stored docs: its length, which "determines" each entry text's length, is read as the
  second u16, the first as the entry's type. The statement text is the rest of the record.
"""

from __future__ import annotations

import functools
import struct
from types import SimpleNamespace

from construct import (
    Array,
    Bytes,
    Construct,
    FixedSized,
    GreedyBytes,
    GreedyRange,
    Int8ub,
    Int16sb,
    Int16sl,
    Int16ub,
    Int16ul,
    Int32sb,
    Int32sl,
    Int32ub,
    Int32ul,
    Int64ub,
    Int64ul,
    Peek,
    Struct,
    Subconstruct,
    this,
)

from udfs.batch import FieldSpec, layout_fields, struct_format

BYTE_ORDERS = ("little", "big")

# Field types (Table 6, column descriptor array) that have a 12-byte LOB descriptor.
LOB_FIELD_TYPES = frozenset((0x0108, 0x0109, 0x0203, 0x010D))

LOG_MANAGER_HEADER_SIZE = 40
COMPENSATION_EXTENSION_SIZE = 16
PROPAGATABLE_COMPENSATION_EXTENSION_SIZE = 8
FILTER_DATA_SIZE = 56
LSN_PREFIX_SIZE = 8


def lob_column_count(column_descriptors: list) -> int:
    """How many LOB descriptors follow a column descriptor array (one per LOB/struct column)."""
    return sum(1 for column in column_descriptors if column.field_type in LOB_FIELD_TYPES)


def decimal_precision_scale(length: int, byteorder: str) -> tuple[int, int]:
    """Split a DECIMAL descriptor's length (byte 0 precision, byte 1 scale) read as a u16."""
    raw = length.to_bytes(2, _order(byteorder))
    return raw[0], raw[1]


class _Uncompiled(Subconstruct):
    """Runs its subcon uncompiled inside a compiled Struct.

    construct cannot compile a count that only a function can give (the LOB descriptor count);
    raising NotImplementedError here makes ``.compile()`` link this instance instead.
    """

    def _emitparse(self, code):
        raise NotImplementedError

    def _emitbuild(self, code):
        raise NotImplementedError


def _lob_descriptors(descriptors_field: str, element: Construct) -> Construct:
    count = functools.partial(_count_lobs_of, descriptors_field)
    return _Uncompiled(Array(count, element))


def _count_lobs_of(field: str, context) -> int:
    return lob_column_count(context[field])


def _entry_length(context) -> int:
    """The length of entry text ``_index``: its DDLStmtRecordEntry's ``entry_length``."""
    return context.entries[context._index].entry_length


def _order(byteorder: str) -> str:
    if byteorder not in BYTE_ORDERS:
        raise ValueError(f"byte order must be 'little' or 'big', got {byteorder!r}")
    return byteorder


@functools.cache
def layouts(byteorder: str = "little") -> SimpleNamespace:
    """Every Db2 LUW layout, built for the server byte order ``'little'`` or ``'big'``."""
    little = _order(byteorder) == "little"
    u8 = Int8ub
    u16 = Int16ul if little else Int16ub
    u32 = Int32ul if little else Int32ub
    u64 = Int64ul if little else Int64ub
    i32 = Int32sl if little else Int32sb
    i16 = Int16sl if little else Int16sb
    ns = SimpleNamespace(byteorder=byteorder, u16=u16, u32=u32, u64=u64, i16=i16)

    # --- log manager header and transaction manager records (README "Db2 LUW") -----------------
    ns.log_manager_header = Struct(
        "record_length" / u32,
        "record_type" / u16,
        "flags" / u16,
        "lsn" / u64,
        "lfs" / u64,
        "lso_previous" / u64,
        "tid" / Bytes(6),
        "log_stream_id" / u16,
    )
    ns.compensation_extension = Struct(
        "extra_log_stream_id" / u16,
        "reserved" / Bytes(6),
        "compensation_lso" / u64,
    )
    ns.propagatable_compensation_extension = Struct("extra_lso" / u64)
    ns.normal_commit = Struct(
        "commit_time" / u64,
        "authid_length" / u16,
        "authid" / Bytes(this.authid_length),
    )
    ns.commit_time_only = Struct("commit_time" / u64)
    ns.local_pending_list = Struct(
        "commit_time" / u64,
        "authid_length" / u16,
        "authid" / Bytes(this.authid_length),
        "pending_list" / GreedyBytes,
    )
    ns.normal_abort = Struct(
        "authid_length" / u16,
        "authid" / Bytes(this.authid_length),
    )

    # --- component headers (Tables 1 and 3; RDS from the README) -------------------------------
    ns.dms_log_record_header = Struct(
        "component_identifier" / u8,
        "function_identifier" / u8,
        "table_space_identifier" / u16,
        "table_identifier" / u16,
    )
    ns.dom_log_record_header = Struct(
        "component_identifier" / u8,
        "function_identifier" / u8,
        "object_table_space_identifier" / u16,
        "object_identifier" / u16,
        "table_space_identifier" / u16,
        "table_identifier" / u16,
        "object_type" / u8,
        "flags" / u8,
    )
    ns.rds_log_record_header = Struct(
        "component_identifier" / u8,
        "function_identifier" / u8,
        "table_space_identifier" / u16,
        "table_identifier" / u16,
        "flags" / u16,
    )
    dms = ns.dms_log_record_header
    dom = ns.dom_log_record_header
    rds = ns.rds_log_record_header

    # --- record header and data (after Table 17) ----------------------------------------------
    ns.record_header = Struct(
        "record_type" / u8,
        "reserved" / u8,
        "record_length" / u16,
    )
    ns.formatted_user_data_header = Struct(
        "record_type" / u8,
        "reserved" / u8,
        "fixed_length" / u16,
    )
    ns.value_compressed_data_header = Struct(
        "record_type" / u8,
        "reserved" / u8,
        "number_of_columns" / u16,
    )
    # One image: its length is the record header's record_length (header included).
    ns.record_header_and_data = Struct(
        "record_header" / Peek(ns.record_header),
        "data" / Bytes(this.record_header.record_length),
    )
    image = ns.record_header_and_data

    # --- DMS row records -----------------------------------------------------------------------
    ns.insert_record = Struct(  # Table 17: 162 insert, 161 delete, 111/112 undo delete/update
        "log_header" / dms,
        "lriudflags" / u16,
        "record_length" / u16,
        "free_space" / u16,
        "rid" / Bytes(6),
        "record_offset" / u16,
        "record_header_and_data" / image,
    )
    ns.rollback_insert_record = Struct(  # Table 9: 110
        "log_header" / dms,
        "internal" / u16,
        "record_length" / u16,
        "free_space" / u16,
        "rid" / Bytes(6),
    )
    ns.update_record = Struct(  # Table 22: 163
        "log_header" / dms,
        "lriudflags" / u16,
        "record_length" / u16,
        "free_space" / u16,
        "rid" / Bytes(6),
        "record_offset" / u16,
        "old_record_header_and_data" / image,
        "new_log_header" / dms,
        "new_internal" / u16,
        "new_record_length" / u16,
        "new_free_space" / u16,
        "new_rid" / Bytes(6),
        "new_record_offset" / u16,
        "new_record_header_and_data" / image,
    )
    ns.insert_record_to_empty_page = Struct(  # Table 20: 165
        "log_header" / dms,
        "lriudflags" / u16,
        "record_length" / u16,
        "free_space" / u16,
        "rid" / Bytes(6),
        "internal" / u16,
        "first_page_of_the_block" / u32,
        "record_offset" / u16,
        "record_header_and_data" / image,
    )
    ns.delete_record_to_empty_page = Struct(  # Table 21: 164 and 166
        "log_header" / dms,
        "internal" / u16,
        "record_length" / u16,
        "free_space" / u16,
        "rid" / Bytes(6),
        "internal_2" / u16,
        "first_page_of_the_block" / u32,
        "record_offset" / u16,
        "record_header_and_data" / image,
    )
    ns.rollback_insert_record_to_empty_page = Struct(  # Table 18: 131
        "log_header" / dms,
        "lriudflags" / u16,
        "record_length" / u16,
        "free_space" / u16,
        "rid" / Bytes(6),
        "internal" / u16,
        "first_page_of_the_block" / u32,
    )
    ns.record_description = Struct(  # Table 26
        "rid" / Bytes(6),
        "record_offset" / u16,
        "record_header_and_data" / image,
    )
    ns.rollback_description = Struct(  # Table 27
        "rid" / Bytes(6),
        "record_offset" / u16,
    )
    multiple_head = (
        "log_header" / dms,
        "padding" / Bytes(2),
        "number_of_records" / u16,
        "free_space" / u16,
        "sum_of_record_lengths" / u16,
        "variable_part_length" / u16,
        "pool_page_number" / u32,
    )
    ns.insert_multiple_records = Struct(  # Table 25: 167
        *multiple_head,
        "record_descriptions" / Array(this.number_of_records, ns.record_description),
    )
    ns.undo_insert_multiple_records = Struct(  # Table 25 with Table 27: 168
        *multiple_head,
        "rollback_descriptions" / Array(this.number_of_records, ns.rollback_description),
    )

    # --- table description and DDL records -----------------------------------------------------
    ns.column_descriptor = Struct(  # after Table 6: 8 bytes
        "field_type" / u16,
        "length" / u16,
        "null_flag" / u16,
        "field_offset" / u16,
    )
    ns.lob_column_descriptor = Struct(  # after Table 6: 12 bytes
        "length" / u32,
        "inline_length" / u16,
        "log_flag" / u16,
        "reserved" / u32,
    )
    column, lob = ns.column_descriptor, ns.lob_column_descriptor
    ns.table_description_record = Struct(  # Table 6
        "record_type" / u8,
        "internal" / u8,
        "number_of_columns" / u16,
        "column_descriptors" / Array(this.number_of_columns, column),
        "lob_column_descriptors" / GreedyRange(lob),
    )
    ns.initialize_table = Struct(  # Table 5: 128
        "log_header" / dms,
        "file_create_lsn" / u64,
        "internal" / Bytes(74),
        "table_description_length" / u32,
        "table_description_record"
        / FixedSized(this.table_description_length, ns.table_description_record),
    )
    ns.add_drop_columns = Struct(  # Table 14: 102, 104, 169, 170
        "log_header" / dms,
        "internal" / u16,
        "old_column_count" / u32,
        "new_column_count" / u32,
        "old_column_descriptors" / Array(this.old_column_count, column),
        "old_lob_column_descriptors" / _lob_descriptors("old_column_descriptors", lob),
        "new_column_descriptors" / Array(this.new_column_count, column),
        "new_lob_column_descriptors" / _lob_descriptors("new_column_descriptors", lob),
    )
    ns.alter_column_attribute = Struct(  # Tables 15 and 16: 113, 115, 116, 119
        "log_header" / dms,
        "column_id" / u16,
        "old_column_definition" / column,
        "new_column_definition" / column,
    )
    ns.alter_table_attribute = Struct(  # Table 13: 124
        "log_header" / dms,
        "alter_bit_mask" / u64,
        "alter_bit_values" / u64,
    )
    ns.rename_table_or_schema = Struct("log_header" / dms)  # Tables 23/24: 122, 123
    ns.update_partition_state = Struct(  # Table 28: 137, 108
        "log_header" / dms,
        "master_table_space_identifier" / u16,
        "master_table_identifier" / u16,
        "internal" / u16,
        "data_partition_identifier" / u16,
        "internal_2" / Bytes(6),
        "internal_3" / u16,
        "partition_action" / u16,
    )
    ns.start_of_out_of_row_data = Struct("log_header" / dms)  # Tables 30/31: 211, 212

    # --- DOM records ---------------------------------------------------------------------------
    ns.create_drop_index = Struct(  # Table 11: 2, 3
        "log_header" / dom,
        "internal" / u16,
        "index_token" / u16,
        "index_root_page" / u32,
    )
    ns.create_drop_table = Struct(  # Table 12: 101, 4, 130, 5
        "log_header" / dom,
        "internal" / Bytes(72),
    )
    ns.import_replace_truncate = Struct(  # Table 7: 11
        "log_header" / dom,
        "internal" / GreedyBytes,
    )
    ns.activate_not_logged_initially = Struct(  # Table 8: 12
        "log_header" / dom,
        "internal" / Bytes(4),
        "long_tablespace_id" / u16,
        "index_tablespace_id" / u16,
        "index_object_id" / u16,
        "lf_object_id" / u16,
        "lob_object_id" / u16,
        "xml_object_id" / u16,
    )
    ns.reorg_table = Struct(  # Table 10: 35
        "log_header" / dom,
        "internal" / Bytes(476),
        "index_token" / u16,
        "temporary_table_space_id" / u16,
        "long_temporary_table_space_id" / u16,
    )

    # --- RDS records (Db2 11.5 docs "Relation manager log records", Tables 3 and 6) ----------
    ns.ddl_stmt_record_entry = Struct(  # Table 6 (not in the stored docs: see the module doc)
        "entry_type" / u16,
        "entry_length" / u16,
    )
    ns.ddl_statement = Struct(  # Table 3: 4 DDL statement, 5 undo DDL statement
        "log_header" / rds,
        "operation_identifier" / u16,
        "object_identifier" / u16,
        "options" / u16,
        "num_entries" / u16,
        "entries" / Array(this.num_entries, ns.ddl_stmt_record_entry),
        "entry_text" / _Uncompiled(Array(this.num_entries, Bytes(_entry_length))),
        "ddl_statement_text_left" / u32,
        "ddl_statement_text_length" / u32,
        "ddl_statement_text" / GreedyBytes,
    )

    # --- db2ReadLog output framing (README) ----------------------------------------------------
    ns.db2_lri = Struct("lri_type" / u64, "part1" / u64, "part2" / u64)
    ns.db2_read_log_filter_data = Struct(
        "record_lri_type1" / ns.db2_lri,
        "record_lri_type2" / ns.db2_lri,
        "real_log_rec_len" / u32,
        "sqlcode" / i32,
    )
    ns.lsn_prefix = Struct("lsn" / u64)
    return ns


# --- fast formats derived from the layouts ---------------------------------------------------


@functools.cache
def fixed_format(name: str, byteorder: str = "little") -> tuple[struct.Struct, tuple[str, ...]]:
    """A ``struct.Struct`` for the leading fixed-size fields of layout ``name`` and their names.

    Derived from the construct layout by :func:`udfs.batch.layout_fields` (the field table the
    batch decoders read too), not written twice: ``fixed_format("insert_record")`` covers the
    DMS header through ``record_offset`` (20 bytes).
    """
    fields = leading_fields(name, byteorder)
    code = struct_format(list(fields), byteorder)
    return struct.Struct(code), tuple(spec.name for spec in fields)


@functools.cache
def leading_fields(name: str, byteorder: str = "little") -> tuple[FieldSpec, ...]:
    """The field table (name, offset, width, …) of layout ``name``'s leading fixed-size fields."""
    return tuple(layout_fields(getattr(layouts(byteorder), name), leading=True))
