"""Synthetic Db2 LUW capture: db2ReadLog output files, a catalog export and the ground truth.

The byte packing here is written **independently of the decoders** (plain ``struct.pack`` at the
spec offsets, its own DPD and packed-decimal encoders) so the generator is an oracle for them.
Output of :func:`generate`::

    out_dir/db2luw/<capture>/S0000000.log ...   records, each framed by db2ReadLogFilterData
                                                (56 bytes) or an 8-byte LSN (framing='lsn')
    out_dir/db2luw/<capture>/catalog/tables.csv, columns.csv   SYSCAT export, header rows
    out_dir/db2luw/<capture>/catalog/datapartitions.csv, datatypes.csv   SYSCAT.DATAPARTITIONS
                                                (without the partition the log adds) and
                                                SYSCAT.DATATYPES (the distinct type)
    out_dir/truth/db2luw/tables.json    each table's rows after the committed work (rendered)
    out_dir/truth/db2luw/changes.jsonl  one line per row change, with its disposition
    out_dir/truth/db2luw/summary.json   counts

Workload (deterministic for a seed): every column type; tables with and without VALUE
COMPRESSION (and COMPRESS SYSTEM DEFAULT columns); a table created inside the capture (DOM
create table + initialize table + create index); ALTER TABLE ADD COLUMN mid-stream (later
updates of older rows log the before image in the old format); a rolled-back transaction
(compensation records, then abort); a savepoint rollback in a committed transaction; MDC inserts
(165) and an MDC delete (164); insert multiple records (167); a truncate (DOM 11); decomposed
updates (0x8000 delete + insert); updates (163), some of them with the after image in the
insert record before them (insert image record type 0x04, update new half 0x02); an
out-of-row start record (211); an alter table attribute (124); internal (record type 0) rows
and catalog-table (table space 0) changes; a table created in the capture, changed, dropped
(DOM 4; once rolled back, DOM 5) and its table space/table ids reused by another table created
later; a range-partitioned table (``SALES.SHIPMENTS``: its rows' records carry their data
partition's ids) with a column of a distinct type (``SALES.KILOGRAMS``, DECIMAL(9,3)), one
partition added in the capture by ALTER TABLE ADD PARTITION (update partition state record
137, action 1) that ``datapartitions.csv`` leaves out, rows in it after the record; local
pending list commits; pairs of transactions whose records interleave; and an
in-flight transaction at the end. Tables are empty when the capture starts.
``out_dir/truth/db2luw/dropped.json`` holds each dropped table's rows at its drop.

Records stream to disk as they are made; only the tables' current rows stay in memory.
:func:`generate_benchmark` streams N inserts into one simple table with no state at all.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

AUTHIDS = ("APPUSER", "BATCH", "DBADMIN")
NORMAL, COMPENSATION, COMMIT, ABORT, PENDING_LIST = 0x004E, 0x0043, 0x0084, 0x0041, 0x008A
PROPAGATABLE = 0x0002
DECOMPOSED = 0x8000
CATALOG_TS, SYSTABLES_ID = 0, 5
START_TIME = int(dt.datetime(2024, 3, 1, 8, 0, tzinfo=dt.UTC).timestamp())

# --- column types (the generator's own table, not the decoder's) ------------------------------

TYPE_CODES = {
    "SMALLINT": 0x0000, "INTEGER": 0x0001, "DECIMAL": 0x0002, "DOUBLE": 0x0003, "REAL": 0x0004,
    "BIGINT": 0x0005, "DECFLOAT16": 0x0006, "DECFLOAT34": 0x0007, "CHARACTER": 0x0100,
    "VARCHAR": 0x0101, "DATE": 0x0105, "TIME": 0x0106, "TIMESTAMP": 0x0107, "BLOB": 0x0108,
    "CLOB": 0x0109, "BOOLEAN": 0x010F, "BINARY": 0x0110, "VARBINARY": 0x0111, "GRAPHIC": 0x0200,
    "VARGRAPHIC": 0x0201, "DBCLOB": 0x0203, "LONG VARCHAR": 0x0104,
}  # fmt: skip
VARYING = {"VARCHAR", "VARBINARY", "VARGRAPHIC", "BLOB", "CLOB", "DBCLOB", "LONG VARCHAR"}
LOBS = ("BLOB", "CLOB", "DBCLOB")
LONGS = ("LONG VARCHAR",)  # a long field object: the row holds a descriptor, never the value
WIDTHS = {"SMALLINT": 2, "INTEGER": 4, "BIGINT": 8, "REAL": 4, "DOUBLE": 8, "DECFLOAT16": 8,
          "DECFLOAT34": 16, "DATE": 4, "TIME": 3, "TIMESTAMP": 10, "BOOLEAN": 1}  # fmt: skip


@dataclass(frozen=True)
class Col:
    name: str
    type: str  # a TYPE_CODES key
    length: int = 0  # catalog LENGTH: precision for DECIMAL, characters for GRAPHIC
    scale: int = 0
    nullable: bool = True
    compress: bool = False  # COMPRESS SYSTEM DEFAULT
    inline: int = 0  # INLINE_LENGTH of a LOB
    distinct_type: str = ""  # a distinct type (schema SALES) of source ``type``: the catalog
    # names it, with LENGTH 0 (SYSCAT.COLUMNS), and datatypes.csv gives its source

    def width(self) -> int:
        if self.type in VARYING:
            return 4
        if self.type == "DECIMAL":
            return (self.length + 2) // 2
        if self.type == "GRAPHIC":
            return 2 * self.length
        return WIDTHS.get(self.type, self.length)

    def catalog_type(self) -> tuple[str, int]:
        if self.type.startswith("DECFLOAT"):
            return "DECFLOAT", WIDTHS[self.type]
        return self.type, self.length or WIDTHS.get(self.type, 0)


@dataclass
class Partition:
    """A data partition of a range-partitioned table: the rows whose partitioning column is
    ``value`` live in it, and their records carry its (TBSPACEID, PARTITIONOBJECTID)."""

    name: str
    number: int  # DATAPARTITIONID
    ts: int
    object_id: int  # PARTITIONOBJECTID
    value: int
    exported: bool = True  # in datapartitions.csv (False: known to the log only)
    attached: bool = True  # rows may go into it (False until its ADD PARTITION record)


@dataclass
class Table:
    schema: str
    name: str
    ts: int
    tid: int
    cols: list[Col]
    key: str
    value_compression: bool = False
    mdc: bool = False
    rows: dict[Any, dict] = field(default_factory=dict)  # key -> {'values', 'version', 'rid'}
    versions: list[list[Col]] = field(default_factory=list)  # column lists over time
    next_key: int = 1
    next_slot: int = 0
    partitioned_by: str = ""  # range-partitioned on this column (one value per partition)
    partitions: list[Partition] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.versions.append(list(self.cols))

    @property
    def full_name(self) -> str:
        return f"{self.schema}.{self.name}"

    def ids_for(self, values: dict) -> tuple[int, int]:
        """The ids a row's records carry: its data partition's (002_… Table 28), or the
        table's own when it is not partitioned."""
        if not self.partitioned_by:
            return self.ts, self.tid
        (partition,) = (p for p in self.partitions if p.value == values[self.partitioned_by])
        return partition.ts, partition.object_id

    def offsets(self, version: int) -> list[int]:
        """Interpretation 12: COLNO order, fixed portion then the null byte."""
        result, at = [], 0
        for col in self.versions[version]:
            result.append(at)
            at += col.width() + (1 if col.nullable else 0)
        return result


def _tables() -> list[Table]:
    c = Col
    alltypes = Table("SALES", "ALLTYPES", 2, 10, [
        c("ID", "INTEGER", nullable=False), c("C_SMALL", "SMALLINT"), c("C_BIG", "BIGINT"),
        c("C_DEC", "DECIMAL", 9, 2), c("C_REAL", "REAL"), c("C_DOUBLE", "DOUBLE"),
        c("C_DF16", "DECFLOAT16"), c("C_DF34", "DECFLOAT34"), c("C_CHAR", "CHARACTER", 8),
        c("C_VARCHAR", "VARCHAR", 30), c("C_DATE", "DATE"), c("C_TIME", "TIME"),
        c("C_TS", "TIMESTAMP", 10, 6), c("C_BOOL", "BOOLEAN"), c("C_BIN", "BINARY", 4),
        c("C_VARBIN", "VARBINARY", 16), c("C_GRAPHIC", "GRAPHIC", 4),
        c("C_VARGRAPHIC", "VARGRAPHIC", 20), c("C_CLOB", "CLOB", 1024, inline=200),
        c("C_BLOB", "BLOB", 1024, inline=200), c("C_DBCLOB", "DBCLOB", 512, inline=200),
        c("C_LONG", "LONG VARCHAR", 32700),
    ], key="ID")  # fmt: skip
    orders = Table("SALES", "ORDERS", 2, 11, [
        c("ORDER_ID", "BIGINT", nullable=False), c("CUSTOMER", "VARCHAR", 20, nullable=False),
        c("QTY", "INTEGER", nullable=False, compress=True),
        c("AMOUNT", "DECIMAL", 11, 2, compress=True), c("NOTE", "VARCHAR", 40, compress=True),
        c("STATUS", "CHARACTER", 3, nullable=False, compress=True), c("ORDERED", "DATE"),
        c("PRICE", "DOUBLE", compress=True),
    ], key="ORDER_ID", value_compression=True)  # fmt: skip
    accounts = Table("SALES", "ACCOUNTS", 2, 12, [
        c("ACCT_ID", "INTEGER", nullable=False), c("OWNER", "VARCHAR", 30, nullable=False),
        c("BALANCE", "DECIMAL", 15, 2), c("OPENED", "TIMESTAMP", 10, 6),
    ], key="ACCT_ID")  # fmt: skip
    staging = Table("SALES", "STAGING", 2, 13, [
        c("ID", "INTEGER", nullable=False), c("PAYLOAD", "VARCHAR", 50),
    ], key="ID")  # fmt: skip
    events = Table("SALES", "EVENTS", 2, 14, [
        c("EVENT_ID", "BIGINT", nullable=False), c("KIND", "CHARACTER", 6, nullable=False),
        c("AT", "TIMESTAMP", 10, 6, nullable=False), c("DETAIL", "VARCHAR", 60),
    ], key="EVENT_ID")  # fmt: skip
    mdc = Table("SALES", "MDC_SALES", 3, 20, [
        c("SALE_ID", "INTEGER", nullable=False), c("REGION", "CHARACTER", 4, nullable=False),
        c("SOLD", "DATE", nullable=False), c("TOTAL", "DECIMAL", 9, 2),
    ], key="SALE_ID", mdc=True)  # fmt: skip
    # SALES.LOADS is created in the capture and dropped; SALES.AUDIT is created later and
    # gets the same table space and table ids (Db2 reuses a dropped table's ids).
    loads = Table("SALES", "LOADS", 2, 15, [
        c("LOAD_ID", "INTEGER", nullable=False), c("BATCH", "VARCHAR", 20),
        c("ROWS_LOADED", "BIGINT"), c("LOADED", "TIMESTAMP", 10, 6),
    ], key="LOAD_ID")  # fmt: skip
    audit = Table("SALES", "AUDIT", 2, 15, [
        c("AUDIT_ID", "BIGINT", nullable=False), c("ACTION", "CHARACTER", 8, nullable=False),
        c("AMOUNT", "DECIMAL", 7, 2, compress=True), c("NOTE", "VARGRAPHIC", 12),
    ], key="AUDIT_ID", value_compression=True)  # fmt: skip
    # range-partitioned by SHIP_YEAR; P2026 is added in the capture (ADD PARTITION record)
    shipments = Table("SALES", "SHIPMENTS", 2, 30, [
        c("SHIP_ID", "BIGINT", nullable=False), c("SHIP_YEAR", "SMALLINT", nullable=False),
        c("DEST", "VARCHAR", 20), c("WEIGHT", "DECIMAL", 9, 3, distinct_type="KILOGRAMS"),
    ], key="SHIP_ID", partitioned_by="SHIP_YEAR", partitions=[
        Partition("P2024", 0, 4, 31, 2024), Partition("P2025", 1, 4, 32, 2025),
        Partition("P2026", 2, 5, 33, 2026, exported=False, attached=False),
    ])  # fmt: skip
    return [alltypes, orders, accounts, staging, events, mdc, loads, audit, shipments]


ADDED_COLUMN = Col("TIER", "CHARACTER", 1)

# --- value encoding (independent of udfs.values) --------------------------------------------


def _dpd_declet(d2: int, d1: int, d0: int) -> int:
    """Three digits -> a 10-bit densely packed declet (IEEE 754-2008 encoding table)."""
    a, e, i = d2 >> 3, d1 >> 3, d0 >> 3
    b, c, d = (d2 >> 2) & 1, (d2 >> 1) & 1, d2 & 1
    f, g, h = (d1 >> 2) & 1, (d1 >> 1) & 1, d1 & 1
    j, k, m = (d0 >> 2) & 1, (d0 >> 1) & 1, d0 & 1
    rows = {
        (0, 0, 0): (b, c, d, f, g, h, 0, j, k, m),
        (0, 0, 1): (b, c, d, f, g, h, 1, 0, 0, m),
        (0, 1, 0): (b, c, d, j, k, h, 1, 0, 1, m),
        (1, 0, 0): (j, k, d, f, g, h, 1, 1, 0, m),
        (1, 1, 0): (j, k, d, 0, 0, h, 1, 1, 1, m),
        (1, 0, 1): (f, g, d, 0, 1, h, 1, 1, 1, m),
        (0, 1, 1): (b, c, d, 1, 0, h, 1, 1, 1, m),
        (1, 1, 1): (0, 0, d, 1, 1, h, 1, 1, 1, m),
    }
    value = 0
    for bit in rows[(a, e, i)]:
        value = (value << 1) | bit
    return value


def encode_decfloat(value: Decimal, size: int, bo: str) -> bytes:
    """decimal64 (8) / decimal128 (16), DPD coefficient, in the server byte order."""
    digits_total, ec_bits, bias = {8: (16, 8, 398), 16: (34, 12, 6176)}[size]
    sign, digits, exponent = value.as_tuple()
    coefficient = "".join(map(str, digits)).rjust(digits_total, "0")
    biased = int(exponent) + bias
    msd = int(coefficient[0])
    high = biased >> ec_bits
    combination = (high << 3) | msd if msd < 8 else 0b11000 | (high << 1) | (msd - 8)
    bits = size * 8
    word = (sign << (bits - 1)) | (combination << (bits - 6))
    word |= (biased & ((1 << ec_bits) - 1)) << (bits - 6 - ec_bits)
    rest = coefficient[1:]
    for n in range(0, len(rest), 3):
        declet = _dpd_declet(int(rest[n]), int(rest[n + 1]), int(rest[n + 2]))
        word |= declet << (10 * ((len(rest) - n) // 3 - 1))
    return word.to_bytes(size, "little" if bo == "<" else "big")


def encode_packed(unscaled: int, size: int) -> bytes:
    digits = str(abs(unscaled)).rjust(size * 2 - 1, "0")
    return bytes.fromhex(digits + ("d" if unscaled < 0 else "c"))


# A LOB longer than its INLINE_LENGTH is stored in the LOB object: the row holds a LOB
# descriptor, and the log (without the LOB object's records) does not carry the value. Db2's
# descriptor layout is not in the specs; the generator writes 24 bytes of its own, a first byte
# 0x01 (neither 0x69, an inline LOB's header, nor 0x80, an empty one) then the value's length.
LOB_DESCRIPTOR_SIZE = 24


def lob_bytes(col: Col, value: Any) -> bytes:
    """A LOB value's data bytes (CLOB UTF-8, DBCLOB UTF-16, BLOB as it is)."""
    if col.type == "CLOB":
        return value.encode("utf-8")
    if col.type == "DBCLOB":
        return value.encode("utf-16-be")
    return value


def lob_not_inline(col: Col, value: Any) -> bool:
    """Whether a LOB value is stored outside the row (its 4-byte inline header and data do
    not fit INLINE_LENGTH): the log then holds a descriptor, not the value."""
    if col.type not in LOBS or value is None:
        return False
    return len(lob_bytes(col, value)) + 4 > col.inline


def lob_descriptor(col: Col, value: Any, bo: str) -> bytes:
    """The generator's LOB descriptor (:data:`LOB_DESCRIPTOR_SIZE` bytes)."""
    size = len(lob_bytes(col, value))
    return b"\x01\x00\x00\x00" + struct.pack(bo + "I", size) + bytes(LOB_DESCRIPTOR_SIZE - 8)


# A LONG VARCHAR value lives in the table's long field object: the row holds a long field
# descriptor (its offset and length in the fixed section, like a VARCHAR's), and the log does
# not carry the value. The descriptor is not in the specs either; the generator writes 24 bytes
# of its own: a first byte 0x02, then the value's length.
LONG_DESCRIPTOR_SIZE = 24


def long_descriptor(value: str, bo: str) -> bytes:
    """The generator's long field descriptor (:data:`LONG_DESCRIPTOR_SIZE` bytes)."""
    size = len(value.encode("utf-8"))
    return b"\x02\x00\x00\x00" + struct.pack(bo + "I", size) + bytes(LONG_DESCRIPTOR_SIZE - 8)


def unavailable_columns(table: Table, values: dict | None, version: int) -> dict | None:
    """The truth's reasons for an image written in ``version`` of the table (udfs/unavailable.py
    vocabulary): ``added_after_row`` for a column of the current version that the image's
    version lacks, ``not_logged_lob`` for a LOB not inline, ``not_logged_long`` for a LONG
    VARCHAR value (never in the row); None when there is no image."""
    if values is None:
        return None
    written = {c.name for c in table.versions[version]}
    reasons = {}
    for col in table.versions[-1]:
        if col.name not in written:
            reasons[col.name] = "added_after_row"
        elif lob_not_inline(col, values.get(col.name)):
            reasons[col.name] = "not_logged_lob"
        elif col.type in LONGS and values.get(col.name) is not None:
            reasons[col.name] = "not_logged_long"
    return reasons


def last_image_unavailable(table: Table, row: dict) -> dict:
    """tables.json's reasons of a final row: those of the image that last wrote it, read with
    its own table version. A row written before an ADD COLUMN has no entry for the new column
    in that image (the row history shows none), so not ``added_after_row``: only a LOB not
    inline is named."""
    reasons = unavailable_columns(table, row["values"], row["version"]) or {}
    return {name: why for name, why in reasons.items() if why != "added_after_row"}


def truth_values(table: Table, values: dict, version: int) -> dict:
    """An image as the truth renders it: a value the log does not carry is null."""
    missing = unavailable_columns(table, values, version) or {}
    return {
        c.name: None if c.name in missing else render(c, values.get(c.name))
        for c in table.versions[-1]
    }


def _lob(data: bytes, bo: str) -> bytes:
    if not data:  # 002_…: a first byte 0x80 is an empty LOB whatever follows; write a 4-byte form
        return b"\x80\x00\x00\x00"
    return b"\x69\x00" + struct.pack(bo + "H", len(data)) + data


def encode_value(col: Col, value: Any, bo: str) -> bytes:
    t = col.type
    if t in ("SMALLINT", "INTEGER", "BIGINT"):
        return struct.pack(bo + {"SMALLINT": "h", "INTEGER": "i", "BIGINT": "q"}[t], value)
    if t == "DECIMAL":
        return encode_packed(int(value.scaleb(col.scale)), col.width())
    if t == "REAL":
        return struct.pack(bo + "f", value)
    if t == "DOUBLE":
        return struct.pack(bo + "d", value)
    if t.startswith("DECFLOAT"):
        return encode_decfloat(value, col.width(), bo)
    if t == "CHARACTER":
        return value.encode("utf-8").ljust(col.length, b" ")
    if t == "VARCHAR":
        return value.encode("utf-8")
    if t == "GRAPHIC":
        return value.ljust(col.length).encode("utf-16-be")
    if t == "VARGRAPHIC":
        return value.encode("utf-16-be")
    if t in ("BINARY", "VARBINARY"):
        return value
    if t == "DATE":
        return bytes.fromhex(value.strftime("%Y%m%d"))
    if t == "TIME":
        return bytes.fromhex(value.strftime("%H%M%S"))
    if t == "TIMESTAMP":
        return bytes.fromhex(value.strftime("%Y%m%d%H%M%S%f"))
    if t == "BOOLEAN":
        return b"\x01" if value else b"\x00"
    if t in LONGS:
        return long_descriptor(value, bo)
    if t in LOBS and lob_not_inline(col, value):
        return lob_descriptor(col, value, bo)
    if t in LOBS:
        return _lob(lob_bytes(col, value), bo)
    raise ValueError(t)


def render(col: Col, value: Any) -> str | None:
    """The marts' text of a value, written out from the Python value (not from bytes)."""
    if value is None:
        return None
    t = col.type
    if t == "DECIMAL":
        return format(value, f".{col.scale}f")
    if t in ("REAL", "DOUBLE"):
        return repr(float(value))
    if t.startswith("DECFLOAT"):
        return str(value)
    if t == "CHARACTER":  # CHAR(n) counts bytes: pad the UTF-8 bytes, not the characters
        return value.encode("utf-8").ljust(col.length, b" ").decode("utf-8")
    if t == "GRAPHIC":
        return value.ljust(col.length)
    if t in ("BINARY", "VARBINARY", "BLOB"):
        return value.hex().upper()
    if t == "DATE":
        return value.isoformat()
    if t == "TIME":
        return value.strftime("%H:%M:%S")
    if t == "TIMESTAMP":
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if t == "BOOLEAN":
        return "true" if value else "false"
    return str(value)


def is_system_default(col: Col, value: Any) -> bool:
    if value is None or col.type in ("DATE", "TIME", "TIMESTAMP"):
        return False
    if col.type in ("CHARACTER", "GRAPHIC"):
        # padded with blanks (U+0020) only: str.strip() would take a CR or a tab for one too
        return value.strip(" ") == ""
    if col.type in ("BINARY", "VARBINARY", "BLOB"):
        return not any(value)
    if col.type in ("VARCHAR", "VARGRAPHIC", "CLOB", "DBCLOB"):
        return value == ""
    return value == 0


# --- row images ---------------------------------------------------------------------------------


def row_image(table: Table, values: dict, version: int, bo: str, outer: int = 0) -> bytes:
    """Record header (record type ``outer``) + formatted user data (with or without VALUE
    COMPRESSION)."""
    cols = table.versions[version]
    if table.value_compression:
        body = _value_compressed(cols, values, bo)
    else:
        body = _formatted(cols, table.offsets(version), values, bo)
    return struct.pack(bo + "BBH", outer, 0, 4 + len(body)) + body


IMAGE_ELSEWHERE, CARRIES_UPDATE_IMAGE = 0x02, 0x04  # outer record types (002_…, update record)


def pointer_image(rid: bytes, bo: str) -> bytes:
    """An update record's new half of record type 0x02: the after image is in the preceding
    insert record. What follows the record header is not in the specs; the generator writes the
    insert's RID there and the decoders do not read it."""
    return struct.pack(bo + "BBH", IMAGE_ELSEWHERE, 0, 4 + len(rid)) + rid


def _formatted(cols: list[Col], offsets: list[int], values: dict, bo: str) -> bytes:
    fixed_length = offsets[-1] + cols[-1].width() + (1 if cols[-1].nullable else 0)
    fixed, variable = bytearray(fixed_length), bytearray()
    for col, at in zip(cols, offsets, strict=True):
        value = values.get(col.name)
        if value is None:
            fixed[at + col.width()] = 1
            continue
        data = encode_value(col, value, bo)
        if col.type in VARYING:
            fixed[at : at + 4] = struct.pack(bo + "HH", fixed_length + len(variable), len(data))
            variable += data
        else:
            fixed[at : at + len(data)] = data
    return struct.pack(bo + "BBH", 1, 0, fixed_length) + bytes(fixed) + bytes(variable)


def _value_compressed(cols: list[Col], values: dict, bo: str) -> bytes:
    count = len(cols)
    offsets, data = [], bytearray()
    start = 2 * (count + 1)  # interpretation 11: offsets from the start of the offset array
    for col in cols:
        value = values.get(col.name)
        if value is None:
            offsets.append(0x8000 | (start + len(data)))
            data.append(0x01)
        elif col.compress and is_system_default(col, value):
            offsets.append(0x8000 | (start + len(data)))
            data.append(0x80)
        else:
            offsets.append(start + len(data))
            data += encode_value(col, value, bo)
    offsets.append(start + len(data))
    return struct.pack(bo + "BBH", 2, 0, count) + struct.pack(bo + f"{count + 1}H", *offsets) + data


def internal_image(bo: str) -> bytes:
    """A record-type-0 (internal meta data) record: not a user row."""
    body = b"\x00\x00" + bytes(range(10))
    return struct.pack(bo + "BBH", 0, 0, 4 + len(body)) + body


# --- record bodies --------------------------------------------------------------------------


def dms(bo: str, function: int, ts: int, tid: int) -> bytes:
    return struct.pack(bo + "BBHH", 1, function, ts, tid)


def dom(bo: str, function: int, ts: int, tid: int, obj: int = 0) -> bytes:
    return struct.pack(bo + "BBHHHHBB", 4, function, ts, obj or tid, ts, tid, 1, 0)


def insert_body(bo, function, ts, tid, image, rid, lriud=0) -> bytes:
    """Table 17 (162 insert, 161 delete, 111 undo delete, 112 undo update)."""
    head = struct.pack(bo + "HHH6sH", lriud, len(image), 100, rid, 300)
    return dms(bo, function, ts, tid) + head + image


def update_body(bo, ts, tid, old, new, rid) -> bytes:
    """Table 22 (163): old half, second DMS header, new half."""
    first = dms(bo, 163, ts, tid) + struct.pack(bo + "HHH6sH", 0, len(old), 100, rid, 300) + old
    second = dms(bo, 163, ts, tid) + struct.pack(bo + "HHH6sH", 0, len(new), 90, rid, 300) + new
    return first + second


def undo_insert_body(bo, ts, tid, rid, length) -> bytes:
    """Table 9 (110): 18 bytes, no image."""
    return dms(bo, 110, ts, tid) + struct.pack(bo + "HHH6s", 0, length, 120, rid)


def empty_page_body(bo, function, ts, tid, image, rid, first_page, lriud=0) -> bytes:
    """Tables 20/21 (165, 164, 166)."""
    head = struct.pack(bo + "HHH6sHIH", lriud, len(image), 4000, rid, 0, first_page, 300)
    return dms(bo, function, ts, tid) + head + image


def insert_multiple_body(bo, ts, tid, images, rids, page) -> bytes:
    """Tables 25/26 (167)."""
    parts = [rid + struct.pack(bo + "H", 300 + 40 * n) + image
             for n, (image, rid) in enumerate(zip(images, rids, strict=True))]  # fmt: skip
    variable = b"".join(parts)
    total = sum(len(image) for image in images)
    head = struct.pack(bo + "2sHHHHI", b"\0\0", len(images), 500, total, len(variable), page)
    return dms(bo, 167, ts, tid) + head + variable


def descriptors(table: Table, version: int, bo: str) -> bytes:
    """Column descriptor array then LOB descriptor array (after Table 6)."""
    cols, offsets = table.versions[version], table.offsets(version)
    array, lobs = b"", b""
    for col, at in zip(cols, offsets, strict=True):
        if col.type == "DECIMAL":
            length = bytes((col.length, col.scale))  # byte 0 precision, byte 1 scale
        elif col.type in LOBS:  # LOB descriptor lengths are bytes (DBCLOB: 2 per character)
            length = struct.pack(bo + "H", 0)
            size = col.length * (2 if col.type == "DBCLOB" else 1)
            lobs += struct.pack(bo + "IHHI", size, col.inline, 1, 0)
        else:
            length = struct.pack(bo + "H", col.width() if col.type not in VARYING else
                                 col.length * (2 if col.type == "VARGRAPHIC" else 1))  # fmt: skip
        null_flag = (0x0001 if col.nullable else 0x0002) | (0x0080 if col.compress else 0)
        array += struct.pack(bo + "H", TYPE_CODES[col.type]) + length
        array += struct.pack(bo + "HH", null_flag, at)
    return array + lobs


def initialize_table_body(bo: str, table: Table, file_lsn: int) -> bytes:
    """Table 5 (128) with the Table 6 description record."""
    description = struct.pack(bo + "BBH", 0x10, 0, len(table.cols)) + descriptors(table, 0, bo)
    head = struct.pack(bo + "Q", file_lsn) + bytes(74) + struct.pack(bo + "I", len(description))
    return dms(bo, 128, table.ts, table.tid) + head + description


def add_columns_body(bo: str, table: Table, old: int, new: int) -> bytes:
    """Table 14 (102)."""
    counts = struct.pack(bo + "HII", 0, len(table.versions[old]), len(table.versions[new]))
    return (dms(bo, 102, table.ts, table.tid) + counts + descriptors(table, old, bo)
            + descriptors(table, new, bo))  # fmt: skip


# RDS DDL statement records (Relation manager Table 3, read as docs/db2luw.md interpretation
# 20 says): operation and object identifiers are written as the generator's own codes (their
# Tables 4/5 are not in the stored docs), entries as (type, length) then their texts.
RDS_TEXT_CHUNK = 96  # statement bytes per record: longer statements are split
DDL_OPERATIONS = {"CREATE": 1, "ALTER": 2, "DROP": 3, "TRUNCATE": 4}
DDL_OBJECTS = {"TABLE": 1, "INDEX": 2}


def rds(bo: str, function: int, ts: int, tid: int, flags: int = 0) -> bytes:
    return struct.pack(bo + "BBHHH", 11, function, ts, tid, flags)


def ddl_statement_bodies(bo: str, ts: int, tid: int, text: str, entries: list[tuple[int, str]],
                         chunk: int = RDS_TEXT_CHUNK) -> list[bytes]:  # fmt: skip
    """RDS 4 records of one statement: every piece has the fixed part, text left and total
    length; the entries ride on the first piece only."""
    words = text.split()
    operation = DDL_OPERATIONS.get(words[0], 0)
    obj = DDL_OBJECTS.get(words[1] if words[1] != "UNIQUE" else words[2], 0)
    raw, bodies, at = text.encode("utf-8"), [], 0
    while at < len(raw) or not bodies:
        piece = raw[at : at + chunk]
        listed = entries if not bodies else []
        texts = [value.encode("utf-8") for _, value in listed]
        head = struct.pack(bo + "HHHH", operation, obj, 0, len(listed))
        head += b"".join(struct.pack(bo + "HH", kind, len(t))
                         for (kind, _), t in zip(listed, texts, strict=True))  # fmt: skip
        head += b"".join(texts) + struct.pack(bo + "II", len(raw) - at, len(raw))
        bodies.append(rds(bo, 4, ts, tid) + head + piece)
        at += chunk
    return bodies


def column_ddl(col: Col) -> str:
    """A column's type as CREATE TABLE spells it (for the generated DDL statement texts)."""
    if col.type.startswith("DECFLOAT"):
        return f"DECFLOAT({col.type[8:]})"
    if col.type == "DECIMAL":
        return f"DECIMAL({col.length},{col.scale})"
    if col.type in ("CHARACTER", "VARCHAR", "BINARY", "VARBINARY", "GRAPHIC", "VARGRAPHIC",
                    "BLOB", "CLOB", "DBCLOB"):  # fmt: skip
        return f"{col.type}({col.length})"
    return col.type


def create_table_text(table: Table) -> str:
    columns = ", ".join(f"{c.name} {column_ddl(c)}{'' if c.nullable else ' NOT NULL'}"
                        for c in table.versions[0])  # fmt: skip
    return f"CREATE TABLE {table.full_name} ({columns}) DATA CAPTURE CHANGES"


def commit_body(bo: str, time: int, authid: str) -> bytes:
    raw = authid.encode()
    return struct.pack(bo + "QH", time, len(raw)) + raw


def abort_body(bo: str, authid: str) -> bytes:
    raw = authid.encode()
    return struct.pack(bo + "H", len(raw)) + raw


# --- the log writer ---------------------------------------------------------------------------


class LogWriter:
    """Assigns LSN/LFS/LSO, packs log manager headers and frames records into .log files."""

    def __init__(self, folder: Path, bo: str, framing: str, file_bytes: int, rng: random.Random):
        self.folder, self.bo, self.framing, self.file_bytes = folder, bo, framing, file_bytes
        self.rng = rng
        self.lsn, self.lfs, self.lso = 105_730_000, 4_421_900, 1_000_000
        self.files: list[str] = []
        self.records = 0
        self._handle = None
        self._written = 0
        self.last_lso: dict[bytes, int] = {}

    def write(self, tid: bytes, rtype: int, body: bytes, undo: tuple[int, int] | None = None,
              flags: int = PROPAGATABLE) -> tuple[int, int]:  # fmt: skip
        """Write one record; returns its (LSN, LSO). ``undo``: (undo-next LSO, compensated LSO)."""
        self.lsn += self.rng.randint(1, 90)
        extension = b""
        if rtype == COMPENSATION:
            extension = struct.pack(self.bo + "H6sQ", 0, bytes(6), undo[0])
            if flags & PROPAGATABLE:
                extension += struct.pack(self.bo + "Q", undo[1])
        length = 40 + len(extension) + len(body)
        prev = self.last_lso.get(tid, 0)
        header = struct.pack(self.bo + "IHHQQQ6sH", length, rtype, flags, self.lsn, self.lfs,
                             prev, tid, 0)  # fmt: skip
        lso = self.lso
        self.lso += length
        self.last_lso[tid] = lso
        self._emit(header + extension + body)
        if rtype in (COMMIT, ABORT, PENDING_LIST):
            self.lfs += 1
            self.last_lso.pop(tid, None)
        return self.lsn, lso

    def _emit(self, record: bytes) -> None:
        if self.framing == "filter":
            prefix = struct.pack(self.bo + "QQQQQQIi", 1, self.lfs, self.lsn, 2, self.lso, 0,
                                 len(record), 0)  # fmt: skip
        else:
            prefix = struct.pack(self.bo + "Q", self.lsn)
        if self._handle is None or self._written >= self.file_bytes:
            self._rotate()
        self._handle.write(prefix + record)
        self._written += len(prefix) + len(record)
        self.records += 1

    def _rotate(self) -> None:
        if self._handle is not None:
            self._handle.close()
        name = f"S{len(self.files):07d}.log"
        self.files.append(name)
        self._handle = (self.folder / name).open("wb")
        self._written = 0

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def continue_in(self, folder: Path) -> None:
        """Write the records that follow into ``folder`` (the next capture of the log stream);
        the log file numbers go on, as Db2's do."""
        self.close()
        self.folder = folder


# --- transactions -------------------------------------------------------------------------------


@dataclass
class Op:
    """One log record of a transaction, with the row change it carries (if any)."""

    rtype: int
    body: bytes
    change: dict | None = None
    compensates: int | None = None  # index of the op this compensation record undoes
    lsn: int = 0
    lso: int = 0
    lso_previous: int = 0
    extra_changes: list = field(default_factory=list)  # insert multiple: one change per row


@dataclass
class Txn:
    tid: bytes
    authid: str
    ops: list[Op] = field(default_factory=list)
    ending: str = "commit"  # commit | pending_list | abort | in_flight
    touched: set = field(default_factory=set)
    apply: list = field(default_factory=list)  # committed effects: (table, op, key, values)


_DONE = object()


class Workload:
    """Builds transactions against the tables' committed state and writes their records."""

    def __init__(self, out: LogWriter, truth, rng: random.Random, bo: str):
        self.out, self.truth, self.rng, self.bo = out, truth, rng, bo
        # SALES.ALLTYPES's LONG VARCHAR values: from a second generator seeded from rng's state
        # (without drawing from it), so the other columns' values stay as they were without it
        self.side_rng = random.Random(repr(rng.getstate()))
        self.tables = {t.name: t for t in _tables()}
        self.created = {"ALLTYPES", "ORDERS", "ACCOUNTS", "STAGING", "MDC_SALES", "SHIPMENTS"}
        self.next_tid = 0x4C1A7E
        self.clock = START_TIME
        self.counts: dict[str, int] = {}
        self.dispositions: dict[str, int] = {}
        self.dropped: dict[str, dict] = {}  # full name -> table, rows at the drop, drop LSN
        self.statements: list[dict] = []  # DDL statements written (truth: ddl_statements.json)

    # --- transaction plumbing

    def new_txn(self) -> Txn:
        self.next_tid += 1
        return Txn(self.next_tid.to_bytes(6, "big"), self.rng.choice(AUTHIDS))

    def add(self, txn: Txn, rtype: int, body: bytes, change: dict | None = None,
            count: str | None = None, compensates: int | None = None) -> int:  # fmt: skip
        txn.ops.append(Op(rtype, body, change, compensates))
        if count:
            self.counts[count] = self.counts.get(count, 0) + 1
        return len(txn.ops) - 1

    def statement(self, txn: Txn, table: Table, text: str) -> None:
        """The RDS DDL statement record(s) of ``text``, before the records of its effects."""
        entries = [(1, table.schema), (2, "SYSIBM,SYSFUN,SYSPROC"), (3, txn.authid)]
        first = len(txn.ops)
        for body in ddl_statement_bodies(self.bo, table.ts, table.tid, text, entries):
            self.add(txn, NORMAL, body, count="ddl_statement")
        self.statements.append({"tid": txn.tid.hex(), "text": text, "op": txn.ops[first],
                                "pieces": len(txn.ops) - first})  # fmt: skip

    def write(self, *txns: Txn) -> None:
        """Write the transactions' records, interleaved, each ending with its commit/abort."""
        streams = [self._records(txn) for txn in txns]
        while streams:
            stream = self.rng.choice(streams)
            if next(stream, _DONE) is _DONE:
                streams.remove(stream)

    def _records(self, txn: Txn) -> Iterator[None]:
        for op in txn.ops:
            undo = None
            if op.rtype == COMPENSATION:
                target = txn.ops[op.compensates]
                undo = (target.lso_previous, target.lso)
            op.lso_previous = self.out.last_lso.get(txn.tid, 0)
            op.lsn, op.lso = self.out.write(txn.tid, op.rtype, op.body, undo)
            if op.change is not None:
                op.change["lsn"] = op.lsn
            yield None
        self._finish(txn)
        yield None

    def _finish(self, txn: Txn) -> None:
        self.clock += self.rng.randint(1, 30)
        end = {"lsn": None, "time": None, "authid": txn.authid}
        if txn.ending in ("commit", "pending_list"):
            rtype = COMMIT if txn.ending == "commit" else PENDING_LIST
            body = commit_body(self.bo, self.clock, txn.authid)
            if rtype == PENDING_LIST:
                body += bytes(12)  # the pending list itself: internal
            end["lsn"], _ = self.out.write(txn.tid, rtype, body)
            end["time"] = dt.datetime.fromtimestamp(self.clock, dt.UTC).strftime(
                "%Y-%m-%d %H:%M:%S"
            )
            for effect in txn.apply:
                self.apply(*effect)
            self._count_txn("committed")
        elif txn.ending == "abort":
            end["lsn"], _ = self.out.write(txn.tid, ABORT, abort_body(self.bo, txn.authid))
            self._count_txn("aborted")
        else:
            self._count_txn("in_flight")
        self.truth.transaction(txn, end)

    def _count_txn(self, what: str) -> None:
        self.dispositions[what] = self.dispositions.get(what, 0) + 1

    def apply(self, table: Table, op: str, key: Any, row: dict | None) -> None:
        if op == "drop":  # row: {'op': the drop table record's Op}
            self.dropped[table.full_name] = {"table": table, "rows": dict(table.rows),
                                             "dropped_lsn": row["op"].lsn}  # fmt: skip
            table.rows.clear()
            self.created.discard(table.name)
        elif op == "truncate":
            table.rows.clear()
        elif op == "delete":
            table.rows.pop(key, None)
        else:
            table.rows[key] = row

    # --- row operations (against committed state + the transaction's own effects)

    def _rid(self, table: Table) -> bytes:
        table.next_slot += 1
        return struct.pack(">IH", 7 + table.next_slot // 50, table.next_slot % 50)

    def _change(self, txn: Txn, table: Table, op: str, before, after, how: str,
                before_version: int | None = None) -> dict:  # fmt: skip
        """A change of the truth; ``before_version``: the table version the before image was
        written in (a row written before an ADD COLUMN), the current one when not given."""
        version = len(table.versions) - 1
        old = version if before_version is None else before_version
        return {
            "tid": txn.tid.hex(), "table": table.full_name, "operation": op, "record": how,
            "before": None if before is None else truth_values(table, before, old),
            "after": None if after is None else truth_values(table, after, version),
            "before_unavailable": unavailable_columns(table, before, old),
            "after_unavailable": unavailable_columns(table, after, version),
        }  # fmt: skip

    def view(self, txn: Txn, table: Table) -> dict:
        """Rows as the transaction sees them: committed rows plus its own pending effects."""
        rows = dict(table.rows)
        for t, op, key, row in txn.apply:
            if t is table:
                if op in ("truncate", "drop"):
                    rows.clear()
                elif op == "delete":
                    rows.pop(key, None)
                else:
                    rows[key] = row
        return rows

    def insert(self, txn: Txn, table: Table, values: dict | None = None, how: str = "insert",
               lriud: int = 0) -> int:  # fmt: skip
        values = values or self.random_row(table)
        key = values[table.key]
        version = len(table.versions) - 1
        rid = self._rid(table)
        row = {"values": values, "version": version, "rid": rid}
        image = row_image(table, values, version, self.bo)
        change = self._change(txn, table, "insert", None, values, how)
        ts, tid = table.ids_for(values)
        if how == "mdc":
            body = empty_page_body(self.bo, 165, ts, tid, image, rid, 64, lriud)
        else:
            body = insert_body(self.bo, 162, ts, tid, image, rid, lriud)
        txn.touched.add((table.name, key))
        txn.apply.append((table, "insert", key, row))
        counted = "insert_record_to_empty_page" if how == "mdc" else "insert_record"
        return self.add(txn, NORMAL, body, change, counted)

    def update(self, txn: Txn, table: Table, key: Any, changes: dict,
               elsewhere: bool = False) -> int:  # fmt: skip
        """An update record (163). ``elsewhere``: the after image goes into an insert record
        (record type 0x04) written just before the update, whose new half is record type 0x02
        (002_…, "Update record log record")."""
        row = self.view(txn, table)[key]
        new_values = {**row["values"], **changes}
        version = len(table.versions) - 1
        old_image = row_image(table, row["values"], row["version"], self.bo)
        ts, tid = table.ids_for(row["values"])  # the partitioning column is never updated
        if elsewhere:
            carrier_rid = self._rid(table)
            image = row_image(table, new_values, version, self.bo, CARRIES_UPDATE_IMAGE)
            body = insert_body(self.bo, 162, ts, tid, image, carrier_rid)
            self.add(txn, NORMAL, body, count="update_image_insert")
            new_image = pointer_image(carrier_rid, self.bo)
        else:
            new_image = row_image(table, new_values, version, self.bo)
        body = update_body(self.bo, ts, tid, old_image, new_image, row["rid"])
        how = "update_image_elsewhere" if elsewhere else "update"
        change = self._change(txn, table, "update", row["values"], new_values, how,
                              row["version"])  # fmt: skip
        txn.touched.add((table.name, key))
        txn.apply.append((table, "update", key, {**row, "values": new_values, "version": version}))
        counted = "update_record_image_elsewhere" if elsewhere else "update_record"
        return self.add(txn, NORMAL, body, change, counted)

    def delete(self, txn: Txn, table: Table, key: Any, how: str = "delete") -> int:
        row = self.view(txn, table)[key]
        image = row_image(table, row["values"], row["version"], self.bo)
        ts, tid = table.ids_for(row["values"])
        if how == "mdc":
            body = empty_page_body(self.bo, 164, ts, tid, image, row["rid"], 64)
        else:
            body = insert_body(self.bo, 161, ts, tid, image, row["rid"])
        change = self._change(txn, table, "delete", row["values"], None, how, row["version"])
        txn.touched.add((table.name, key))
        txn.apply.append((table, "delete", key, None))
        return self.add(txn, NORMAL, body, change, "delete_record")

    def decomposed_update(self, txn: Txn, table: Table, key: Any, changes: dict) -> None:
        """0x8000 delete + 0x8000 insert: one update in the truth."""
        row = self.view(txn, table)[key]
        new_values = {**row["values"], **changes}
        version = len(table.versions) - 1
        old_image = row_image(table, row["values"], row["version"], self.bo)
        new_image = row_image(table, new_values, version, self.bo)
        new_rid = self._rid(table)
        change = self._change(txn, table, "update", row["values"], new_values, "decomposed",
                              row["version"])  # fmt: skip
        ts, tid = table.ids_for(row["values"])
        self.add(
            txn,
            NORMAL,
            insert_body(self.bo, 161, ts, tid, old_image, row["rid"], DECOMPOSED),
            change,
            "decomposed_delete",
        )
        self.add(txn, NORMAL, insert_body(self.bo, 162, ts, tid, new_image, new_rid,
                                          DECOMPOSED), None, "decomposed_insert")  # fmt: skip
        txn.touched.add((table.name, key))
        txn.apply.append((table, "update", key,
                          {"values": new_values, "version": version, "rid": new_rid}))  # fmt: skip

    @staticmethod
    def savepoint(txn: Txn) -> tuple[int, int]:
        return len(txn.ops), len(txn.apply)

    def rollback_to(self, txn: Txn, mark: tuple[int, int], disposition: str) -> None:
        """Write compensation records for the ops after ``mark`` (newest first) and drop their
        effects; their changes get ``disposition``."""
        ops, effects = mark
        undone = [i for i in range(ops, len(txn.ops)) if txn.ops[i].rtype == NORMAL]
        for index in reversed(undone):
            self._compensate(txn, index)
            change = txn.ops[index].change
            if change is not None:
                change["disposition"] = disposition
        del txn.apply[effects:]

    def _compensate(self, txn: Txn, index: int) -> None:
        op, bo = txn.ops[index], self.bo
        function, ts, tid = op.body[1], *struct.unpack_from(bo + "HH", op.body, 2)
        if op.body[0] == 11:  # RDS DDL statement: undo DDL statement (5), same body
            self.add(txn, COMPENSATION, rds(bo, 5, ts, tid) + op.body[8:], None,
                     "undo_ddl_statement", index)  # fmt: skip
        elif op.body[0] == 4:  # DOM: only drop table is rolled back here (undo drop table, 5)
            ts, tid = struct.unpack_from(bo + "HH", op.body, 6)
            body = dom(bo, 5, ts, tid) + op.body[12:]
            self.add(txn, COMPENSATION, body, None, "undo_drop_table", index)
        elif function in (162, 165):
            length = struct.unpack_from(bo + "H", op.body, 8)[0]
            rid = op.body[12:18]
            body = undo_insert_body(bo, ts, tid, rid, length)
            self.add(txn, COMPENSATION, body, None, "undo_insert_record", index)
        elif function == 161:
            body = insert_body(bo, 111, ts, tid, op.body[20:], op.body[12:18])
            self.add(txn, COMPENSATION, body, None, "undo_delete_record", index)
        elif function == 163:
            old_length = struct.unpack_from(bo + "H", op.body, 22)[0]
            old = op.body[20 : 20 + old_length]
            body = insert_body(bo, 112, ts, tid, old, op.body[12:18])
            self.add(txn, COMPENSATION, body, None, "undo_update_record", index)

    # --- values

    def random_row(self, table: Table, key: Any = None) -> dict:
        if key is None:
            key = table.next_key
            table.next_key += 1
        maker = getattr(self, f"_row_{table.name.lower()}")
        return maker(key)

    def _maybe(self, value: Any, chance: float = 0.15) -> Any:
        return None if self.rng.random() < chance else value

    def _text(self, low: int, high: int) -> str:
        words = ("alpha", "beta", "gamma", "delta", "Zürich", "naïve", "東京", "ok")
        size, out = self.rng.randint(low, high), ""
        while len(out) < size:
            out += self.rng.choice(words) + " "
        return out[:size]

    def _clob_text(self) -> str:
        """Mostly short enough to be inline; about one in six longer than INLINE_LENGTH (200),
        so stored out of the row: the log holds a LOB descriptor (issue 14 item 9)."""
        if self.rng.random() < 1 / 6:
            return self._text(260, 400)
        return self._text(0, 120)

    def _timestamp(self) -> dt.datetime:
        return dt.datetime(2024, 3, 1, 8) + dt.timedelta(
            seconds=self.rng.randint(0, 86_400 * 30), microseconds=self.rng.randint(0, 999_999)
        )

    def _row_alltypes(self, key: int) -> dict:
        r, m = self.rng, self._maybe
        stamp = self._timestamp()
        return {
            "ID": key,
            "C_SMALL": m(r.randint(-32768, 32767)),
            "C_BIG": m(r.randint(-(2**63), 2**63 - 1)),
            "C_DEC": m(Decimal(r.randint(-99_999_999, 99_999_999)).scaleb(-2)),
            "C_REAL": m(r.choice((1.5, -2.25, 0.125, 3.75, 100.0, -0.5))),
            "C_DOUBLE": m(round(r.uniform(-1e6, 1e6), 2)),
            "C_DF16": m(Decimal(r.randint(-(10**15), 10**15)).scaleb(-r.randint(0, 6))),
            "C_DF34": m(Decimal(r.randint(-(10**30), 10**30)).scaleb(-r.randint(0, 12))),
            "C_CHAR": m(self._text(1, 8).encode()[:8].decode("utf-8", "ignore")),
            "C_VARCHAR": m(self._text(0, 30).encode()[:30].decode("utf-8", "ignore")),
            "C_DATE": m(stamp.date()),
            "C_TIME": m(stamp.time().replace(microsecond=0)),
            "C_TS": m(stamp),
            "C_BOOL": m(r.random() < 0.5),
            "C_BIN": m(r.randbytes(4)),
            "C_VARBIN": m(r.randbytes(r.randint(0, 16))),
            "C_GRAPHIC": m(r.choice(("ab", "日本", "x", "ÄÖÜß"))),
            "C_VARGRAPHIC": m(r.choice(("", "graphic", "平仮名", "mixed ü"))),
            "C_CLOB": m(self._clob_text()),
            "C_BLOB": m(r.randbytes(r.randint(0, 40))),
            "C_DBCLOB": m(r.choice(("", "double-byte LOB", "長い文字列", "grüße"))),
            "C_LONG": self._long_text(),
        }

    def _long_text(self) -> str | None:
        """A LONG VARCHAR value (issue 14 item 9: the log does not carry it), or NULL."""
        side = self.side_rng
        if side.random() < 0.2:
            return None
        return " ".join(side.choice(("long", "field", "object", "Zürich")) for _ in range(40))

    def _row_orders(self, key: int) -> dict:
        r = self.rng
        return {
            "ORDER_ID": key,
            "CUSTOMER": r.choice(("ACME", "Globex", "Initech", "Umbrella")),
            "QTY": r.choice((0, 0, 1, 5, 12)),
            "AMOUNT": r.choice((None, Decimal("0.00"), Decimal(r.randint(1, 10**9)).scaleb(-2))),
            "NOTE": r.choice((None, "", "rush", "gift wrap")),
            "STATUS": r.choice(("   ", "NEW", "SHP")),
            "ORDERED": self._maybe(self._timestamp().date(), 0.3),
            "PRICE": r.choice((0.0, 9.99, 120.5)),
        }

    def _row_accounts(self, key: int) -> dict:
        row = {
            "ACCT_ID": key,
            "OWNER": self._text(3, 30).strip() or "owner",
            "BALANCE": self._maybe(Decimal(self.rng.randint(-(10**9), 10**12)).scaleb(-2)),
            "OPENED": self._maybe(self._timestamp()),
        }
        if len(self.tables["ACCOUNTS"].versions) > 1:
            row["TIER"] = self.rng.choice((None, "A", "B"))
        return row

    def _row_staging(self, key: int) -> dict:
        return {"ID": key, "PAYLOAD": self._maybe(self._text(5, 50))}

    def _row_events(self, key: int) -> dict:
        return {"EVENT_ID": key, "KIND": self.rng.choice(("LOGIN", "LOGOUT", "PAY")),
                "AT": self._timestamp(), "DETAIL": self._maybe(self._text(0, 60))}  # fmt: skip

    def _row_mdc_sales(self, key: int) -> dict:
        return {"SALE_ID": key, "REGION": self.rng.choice(("EU", "US", "APAC")),
                "SOLD": self._timestamp().date(),
                "TOTAL": self._maybe(Decimal(self.rng.randint(0, 10**7)).scaleb(-2))}  # fmt: skip

    def _row_loads(self, key: int) -> dict:
        return {"LOAD_ID": key, "BATCH": self._maybe(f"batch-{self.rng.randint(1, 999)}"),
                "ROWS_LOADED": self._maybe(self.rng.randint(0, 10**12)),
                "LOADED": self._maybe(self._timestamp())}  # fmt: skip

    def _row_audit(self, key: int) -> dict:
        r = self.rng
        return {"AUDIT_ID": key, "ACTION": r.choice(("GRANT", "REVOKE", "LOGIN")),
                "AMOUNT": r.choice((None, Decimal("0.00"),
                                    Decimal(r.randint(-99999, 99999)).scaleb(-2))),
                "NOTE": self._maybe(r.choice(("", "ok", "審査済み", "Prüfung")))}  # fmt: skip

    def _row_shipments(self, key: int) -> dict:
        r, shipments = self.rng, self.tables["SHIPMENTS"]
        years = [p.value for p in shipments.partitions if p.attached]
        return {"SHIP_ID": key, "SHIP_YEAR": r.choice(years),
                "DEST": self._maybe(r.choice(("Basel", "Osaka", "Lyon", "Kraków"))),
                "WEIGHT": self._maybe(Decimal(r.randint(0, 999_999_999)).scaleb(-3))}  # fmt: skip

    def random_changes(self, table: Table) -> dict:
        fresh = self.random_row(table, key=0)
        names = [
            c.name
            for c in table.versions[-1]
            if c.name not in (table.key, table.partitioned_by) and c.type not in LONGS
        ]
        picked = self.rng.sample(names, k=min(len(names), self.rng.randint(1, 3)))
        # a LONG VARCHAR changes now and then, decided by the second generator (_long_text)
        longs = [c.name for c in table.versions[-1] if c.type in LONGS]
        picked += [name for name in longs if self.side_rng.random() < 0.3]
        return {name: fresh.get(name) for name in picked}


# --- scripted features ------------------------------------------------------------------------


def _feature_create_table(w: Workload) -> Txn:
    """DOM create table + initialize table + create index + catalog rows; pending-list commit."""
    txn, bo, events = w.new_txn(), w.bo, w.tables["EVENTS"]
    w.statement(txn, events, create_table_text(events))
    w.add(txn, NORMAL, dom(bo, 101, events.ts, events.tid) + bytes(72), count="create_table")
    w.add(txn, NORMAL, initialize_table_body(bo, events, 9_000_001), count="initialize_table")
    w.statement(txn, events, f"CREATE INDEX {events.full_name}_IX ON {events.full_name} "
                             f"({events.key})")  # fmt: skip
    w.add(txn, NORMAL, dom(bo, 2, events.ts, events.tid, obj=events.tid)
          + struct.pack(bo + "HHI", 0, 3, 4711), count="create_index")  # fmt: skip
    w.statement(txn, events, f"ALTER TABLE {events.full_name} DATA CAPTURE CHANGES")
    w.add(txn, NORMAL, dms(bo, 124, events.ts, events.tid) + struct.pack(bo + "QQ", 0x1, 0x1),
          count="alter_table_attribute")  # fmt: skip
    _catalog_change(w, txn)
    w.created.add("EVENTS")
    txn.ending = "pending_list"
    return txn


def _catalog_change(w: Workload, txn: Txn) -> None:
    """A row insert into a catalog table (table space 0): kept, but not a user change."""
    image = struct.pack(w.bo + "BBHBBH", 0, 0, 16, 1, 0, 8) + b"EVENTS  "
    w.add(txn, NORMAL, insert_body(w.bo, 162, CATALOG_TS, SYSTABLES_ID, image, bytes(6)),
          count="catalog_change")  # fmt: skip


def _feature_insert_multiple(w: Workload) -> Txn:
    txn, events = w.new_txn(), w.tables["EVENTS"]
    rows = [w.random_row(events) for _ in range(4)]
    images = [row_image(events, row, 0, w.bo) for row in rows]
    rids = [w._rid(events) for _ in rows]
    change_ids = []
    for row, rid in zip(rows, rids, strict=True):
        change_ids.append(w._change(txn, events, "insert", None, row, "insert_multiple"))
        txn.apply.append((events, "insert", row["EVENT_ID"],
                          {"values": row, "version": 0, "rid": rid}))  # fmt: skip
        txn.touched.add(("EVENTS", row["EVENT_ID"]))
    body = insert_multiple_body(w.bo, events.ts, events.tid, images, rids, 777)
    w.add(txn, NORMAL, body, None, "insert_multiple_records")
    txn.ops[-1].change = change_ids[0]
    txn.ops[-1].extra_changes = change_ids[1:]
    return txn


def _feature_add_column(w: Workload) -> Txn:
    """ALTER TABLE ACCOUNTS ADD COLUMN TIER CHAR(1): DMS 102 with old and new arrays."""
    txn, accounts = w.new_txn(), w.tables["ACCOUNTS"]
    accounts.versions.append([*accounts.versions[0], ADDED_COLUMN])
    accounts.cols = accounts.versions[-1]
    w.statement(txn, accounts, f"ALTER TABLE {accounts.full_name} ADD COLUMN "
                               f"{ADDED_COLUMN.name} {column_ddl(ADDED_COLUMN)}")  # fmt: skip
    w.add(txn, NORMAL, add_columns_body(w.bo, accounts, 0, 1), count="add_columns")
    _catalog_change(w, txn)
    return txn


def _feature_rollback(w: Workload) -> Txn:
    """Insert, update, delete, then compensation records newest first, then abort."""
    txn = w.new_txn()
    w.insert(txn, w.tables["ORDERS"])
    acct = _pick(w, txn, w.tables["ACCOUNTS"])
    if acct is not None:
        w.update(txn, w.tables["ACCOUNTS"], acct, w.random_changes(w.tables["ACCOUNTS"]),
                 elsewhere=True)  # fmt: skip
    row = _pick(w, txn, w.tables["ALLTYPES"])
    if row is not None:
        w.delete(txn, w.tables["ALLTYPES"], row)
    w.rollback_to(txn, (0, 0), "aborted")
    txn.ending = "abort"
    return txn


def _feature_savepoint(w: Workload) -> Txn:
    """Insert A; savepoint; insert B, update A; rollback to savepoint; insert C; commit."""
    txn, accounts = w.new_txn(), w.tables["ACCOUNTS"]
    a = w.random_row(accounts)
    w.insert(txn, accounts, a)
    mark = w.savepoint(txn)
    w.insert(txn, accounts)
    w.update(txn, accounts, a["ACCT_ID"], {"OWNER": "savepoint owner"})
    w.rollback_to(txn, mark, "savepoint_rollback")
    w.insert(txn, accounts)
    return txn


def _feature_mdc(w: Workload) -> Txn:
    txn, mdc = w.new_txn(), w.tables["MDC_SALES"]
    for _ in range(3):
        w.insert(txn, mdc, how="mdc")
    w.insert(txn, mdc)
    victim = _pick(w, txn, mdc, committed_only=True)
    if victim is not None:
        w.delete(txn, mdc, victim, how="mdc")
    return txn


def _feature_truncate(w: Workload) -> Txn:
    """TRUNCATE STAGING (DOM 11) and two inserts; the table has a committed row to empty."""
    staging = w.tables["STAGING"]
    if not staging.rows:
        fill = w.new_txn()
        w.insert(fill, staging)
        w.write(fill)
    txn = w.new_txn()
    w.statement(txn, staging, f"TRUNCATE TABLE {staging.full_name} IMMEDIATE")
    w.add(txn, NORMAL, dom(w.bo, 11, staging.ts, staging.tid) + bytes(8), count="truncate")
    txn.ops[-1].change = {
        "tid": txn.tid.hex(), "table": staging.full_name, "operation": "truncate",
        "record": "truncate", "before": None, "after": None,
    }  # fmt: skip
    txn.apply.append((staging, "truncate", None, None))
    for _ in range(2):
        w.insert(txn, staging)
    return txn


def _feature_decomposed(w: Workload) -> Txn:
    txn, orders = w.new_txn(), w.tables["ORDERS"]
    key = _pick(w, txn, orders)
    if key is not None:
        w.decomposed_update(txn, orders, key, {"STATUS": "SHP", "QTY": 3})
    return txn


def _feature_internal_and_lob(w: Workload) -> Txn:
    """An internal (record type 0) record and an out-of-row start before a LOB row."""
    txn, alltypes = w.new_txn(), w.tables["ALLTYPES"]
    w.add(txn, NORMAL, insert_body(w.bo, 162, alltypes.ts, alltypes.tid, internal_image(w.bo),
                                   bytes(6)), count="internal_record")  # fmt: skip
    w.add(txn, NORMAL, dms(w.bo, 211, alltypes.ts, alltypes.tid), count="out_of_row_start")
    w.insert(txn, alltypes)
    return txn


def _feature_update_elsewhere(w: Workload) -> Txn:
    """Updates whose after image is in the insert record before them (0x04 / 0x02), on a table
    without and one with VALUE COMPRESSION, between ordinary updates of the same tables."""
    txn = w.new_txn()
    for name in ("ALLTYPES", "ORDERS"):
        table = w.tables[name]
        while len(w.view(txn, table)) < 2:
            w.insert(txn, table)
        for n, key in enumerate(sorted(w.view(txn, table))[:2]):
            w.update(txn, table, key, w.random_changes(table), elsewhere=n == 0)
    return txn


def _create_table(w: Workload, table: Table) -> Txn:
    """DOM create table + initialize table, two inserts and an update; the table exists from
    its commit on."""
    txn, bo = w.new_txn(), w.bo
    w.statement(txn, table, create_table_text(table))
    w.add(txn, NORMAL, dom(bo, 101, table.ts, table.tid) + bytes(72), count="create_table")
    w.add(txn, NORMAL, initialize_table_body(bo, table, 9_000_000 + table.tid),
          count="initialize_table")  # fmt: skip
    w.created.add(table.name)
    first = w.random_row(table)
    w.insert(txn, table, first)
    w.insert(txn, table)
    w.update(txn, table, first[table.key], w.random_changes(table))
    return txn


def _feature_create_loads(w: Workload) -> Txn:
    return _create_table(w, w.tables["LOADS"])


def _drop_table(w: Workload, txn: Txn, table: Table) -> int:
    w.statement(txn, table, f"DROP TABLE {table.full_name}")
    index = w.add(txn, NORMAL, dom(w.bo, 4, table.ts, table.tid) + bytes(72), count="drop_table")
    txn.apply.append((table, "drop", None, {"op": txn.ops[index]}))
    return index


def _feature_drop_rolled_back(w: Workload) -> Txn:
    """Insert into LOADS, DROP TABLE LOADS, ROLLBACK: undo drop table (5), undo insert."""
    txn, loads = w.new_txn(), w.tables["LOADS"]
    w.insert(txn, loads)
    _drop_table(w, txn, loads)
    w.rollback_to(txn, (0, 0), "aborted")
    txn.ending = "abort"
    return txn


def _feature_drop_loads(w: Workload) -> Txn:
    """DROP TABLE LOADS: its ids are free for the next table created in its table space."""
    txn = w.new_txn()
    _drop_table(w, txn, w.tables["LOADS"])
    return txn


def _feature_create_audit(w: Workload) -> Txn:
    """CREATE TABLE AUDIT: another layout on the ids LOADS had."""
    return _create_table(w, w.tables["AUDIT"])


def partition_state_body(bo: str, table: Table, partition: Partition, action: int) -> bytes:
    """Table 28 (137): the partition's ids in the DMS header, then master table space id,
    master table id, internal, data partition id, internal (6 + 2 bytes), partition action."""
    return dms(bo, 137, partition.ts, partition.object_id) + struct.pack(
        bo + "HHHH6sHH", table.ts, table.tid, 0, partition.number, bytes(6), 0, action
    )


def _feature_add_partition(w: Workload) -> Txn:
    """ALTER TABLE SHIPMENTS ADD PARTITION P2026 (update partition state, action 1 = ADD
    PARTITION; the catalog export's datapartitions.csv does not list it), then rows in it."""
    txn, shipments = w.new_txn(), w.tables["SHIPMENTS"]
    (added,) = (p for p in shipments.partitions if not p.attached)
    w.statement(txn, shipments, f"ALTER TABLE {shipments.full_name} ADD PARTITION {added.name} "
                                f"STARTING ({added.value}) ENDING ({added.value})")  # fmt: skip
    w.add(txn, NORMAL, partition_state_body(w.bo, shipments, added, 1),
          count="update_partition_state")  # fmt: skip
    added.attached = True
    for _ in range(2):
        w.insert(txn, shipments, {**w.random_row(shipments), "SHIP_YEAR": added.value})
    return txn


def _pick(w: Workload, txn: Txn, table: Table, committed_only: bool = False,
          locked: set | None = None) -> Any:  # fmt: skip
    rows = table.rows if committed_only else w.view(txn, table)
    choices = [k for k in rows if (table.name, k) not in (locked or set())]
    return w.rng.choice(sorted(choices)) if choices else None


def _random_txn(w: Workload, locked: set) -> Txn:
    txn = w.new_txn()
    names = [*sorted(w.created - {"STAGING"}), "STAGING"]
    for _ in range(w.rng.randint(1, 4)):
        table = w.tables[w.rng.choice(names)]
        key = _pick(w, txn, table, locked=locked)
        roll = w.rng.random()
        if key is None or roll < 0.55:
            w.insert(txn, table)
        elif roll < 0.85:
            w.update(txn, table, key, w.random_changes(table), elsewhere=w.rng.random() < 0.15)
        else:
            w.delete(txn, table, key)
    if w.rng.random() < 0.04:
        w.rollback_to(txn, (0, 0), "aborted")
        txn.ending = "abort"
    return txn


FEATURES = (
    (0.02, _feature_create_table), (0.03, _feature_create_loads),
    (0.05, _feature_insert_multiple), (0.10, _feature_mdc), (0.15, _feature_internal_and_lob),
    (0.20, _feature_update_elsewhere), (0.30, _feature_rollback),
    (0.40, _feature_drop_rolled_back), (0.45, _feature_add_column), (0.50, _feature_drop_loads),
    (0.55, _feature_savepoint), (0.60, _feature_create_audit), (0.65, _feature_truncate),
    (0.70, _feature_add_partition), (0.75, _feature_decomposed), (0.85, _feature_rollback),
    (0.90, _feature_decomposed),
)  # fmt: skip

# --- truth ------------------------------------------------------------------------------------


class Truth:
    """Streams changes.jsonl as transactions end; writes tables.json and summary.json last."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.handle = (folder / "changes.jsonl").open("w", encoding="utf-8")
        self.changes: dict[str, int] = {}

    def transaction(self, txn: Txn, end: dict) -> None:
        default = {"commit": "committed", "pending_list": "committed", "abort": "aborted",
                   "in_flight": "in_flight"}[txn.ending]  # fmt: skip
        for op in txn.ops:
            for change in [op.change, *op.extra_changes]:
                if change is None:
                    continue
                change["lsn"] = op.lsn
                if txn.ending == "in_flight":  # undone or not: nothing ended it (yet)
                    change["disposition"] = default
                change.setdefault("disposition", default)
                for side in ("before_unavailable", "after_unavailable"):  # no image: none
                    change.setdefault(side, None)
                change.update(commit_lsn=end["lsn"], commit_time=end["time"],
                              authid=end["authid"])  # fmt: skip
                self.changes[change["disposition"]] = self.changes.get(change["disposition"], 0) + 1
                self.handle.write(json.dumps(change, sort_keys=True) + "\n")

    def close(self, workload: Workload) -> dict:
        self.handle.close()
        tables = {}
        for table in workload.tables.values():
            if table.name not in workload.created:
                continue
            cols = table.versions[-1]
            ordered = [row for _, row in sorted(table.rows.items())]
            rows = [truth_values(table, row["values"], row["version"]) for row in ordered]
            tables[table.full_name] = {
                "key": [table.key], "columns": [c.name for c in cols], "rows": rows,
                "unavailable": [last_image_unavailable(table, row) for row in ordered],
            }  # fmt: skip
        (self.folder / "tables.json").write_text(json.dumps(tables, indent=1, sort_keys=True))
        dropped = {}
        for name, info in workload.dropped.items():
            table = info["table"]
            cols = table.versions[-1]
            dropped[name] = {
                "tbspaceid": table.ts, "tableid": table.tid, "dropped_lsn": info["dropped_lsn"],
                "key": [table.key], "columns": [c.name for c in cols],
                "rows": [{c.name: render(c, row["values"].get(c.name)) for c in cols}
                         for _, row in sorted(info["rows"].items())],
            }  # fmt: skip
        (self.folder / "dropped.json").write_text(json.dumps(dropped, indent=1, sort_keys=True))
        statements = [{"tid": st["tid"], "lsn": st["op"].lsn, "text": st["text"],
                       "pieces": st["pieces"]} for st in workload.statements]  # fmt: skip
        (self.folder / "ddl_statements.json").write_text(json.dumps(statements, indent=1))
        return tables


# --- catalog export ---------------------------------------------------------------------------

TABLE_FIELDS = ("TABSCHEMA", "TABNAME", "TBSPACEID", "TABLEID", "TYPE", "COMPRESSION",
                "DATACAPTURE", "COLCOUNT")  # fmt: skip
COLUMN_FIELDS = ("TABSCHEMA", "TABNAME", "COLNAME", "COLNO", "TYPESCHEMA", "TYPENAME", "LENGTH",
                 "SCALE", "NULLS", "COMPRESS", "INLINE_LENGTH", "CODEPAGE", "KEYSEQ")  # fmt: skip
DATAPARTITION_FIELDS = ("TABSCHEMA", "TABNAME", "DATAPARTITIONNAME", "DATAPARTITIONID",
                        "TBSPACEID", "PARTITIONOBJECTID")  # fmt: skip
DATATYPE_FIELDS = ("TYPESCHEMA", "TYPENAME", "SOURCESCHEMA", "SOURCENAME", "METATYPE", "LENGTH",
                   "SCALE")  # fmt: skip


def write_catalog(folder: Path, tables: list[Table]) -> None:
    """tables.csv + columns.csv as SYSCAT.TABLES / SYSCAT.COLUMNS, with header rows; and, when
    a table has them, datapartitions.csv (SYSCAT.DATAPARTITIONS: the partitions exported) and
    datatypes.csv (SYSCAT.DATATYPES: the distinct types of the columns)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "tables.csv").open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(TABLE_FIELDS)
        for t in tables:
            out.writerow((t.schema, t.name, t.ts, t.tid, "T", "V" if t.value_compression else "N",
                          "Y", len(t.versions[-1])))  # fmt: skip
    with (folder / "columns.csv").open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(COLUMN_FIELDS)
        for t in tables:
            for colno, col in enumerate(t.versions[-1]):
                type_name, length = col.catalog_type()
                type_schema, scale = "SYSIBM", col.scale
                if col.distinct_type:  # SYSCAT.COLUMNS: "LENGTH ... 0 for distinct types"
                    type_schema, type_name, length, scale = "SALES", col.distinct_type, 0, 0
                codepage = {"GRAPHIC": 1200, "VARGRAPHIC": 1200, "DBCLOB": 1200, "BINARY": 0,
                            "VARBINARY": 0, "BLOB": 0}.get(col.type, 1208)  # fmt: skip
                out.writerow((t.schema, t.name, col.name, colno, type_schema, type_name, length,
                              scale, "Y" if col.nullable else "N", "S" if col.compress else "N",
                              col.inline, codepage, 1 if col.name == t.key else ""))  # fmt: skip
    partitions = [(t, p) for t in tables for p in t.partitions if p.exported]
    if partitions:
        with (folder / "datapartitions.csv").open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(DATAPARTITION_FIELDS)
            for t, p in partitions:
                out.writerow((t.schema, t.name, p.name, p.number, p.ts, p.object_id))
    distinct = sorted({(c.distinct_type, c.type, c.length, c.scale) for t in tables
                       for c in t.versions[-1] if c.distinct_type})  # fmt: skip
    if distinct:
        with (folder / "datatypes.csv").open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(DATATYPE_FIELDS)
            for name, source, length, scale in distinct:
                out.writerow(("SALES", name, "SYSIBM", source, "T", length, scale))


# --- entry points -------------------------------------------------------------------------------


def _byteorder_code(byteorder: str) -> str:
    if byteorder not in ("little", "big"):
        raise ValueError(f"byteorder must be 'little' or 'big', got {byteorder!r}")
    return "<" if byteorder == "little" else ">"


def generate(
    out_dir: Path,
    transactions: int = 200,
    seed: int = 1,
    *,
    capture: str = "capture01",
    byteorder: str = "little",
    framing: str = "filter",
    file_bytes: int = 64 * 1024,
    split: str | None = None,
) -> dict:
    """Write a synthetic capture and its ground truth under ``out_dir``; returns the summary.

    ``split``: the log is cut in two captures of one log stream (give both the same first
    folder, e.g. ``SAMPLE/c1`` and ``SAMPLE/c2``): the records before the middle go to
    ``capture``, the rest to ``split``, each capture with the catalog export of its end. The
    cut is inside a committed transaction (open at the end of the first capture, committed
    in the second); ``summary["split"]`` names it."""
    if framing not in ("filter", "lsn"):
        raise ValueError(f"framing must be 'filter' or 'lsn', got {framing!r}")
    transactions = max(transactions, 20)  # room for every scripted feature
    bo, rng = _byteorder_code(byteorder), random.Random(seed)
    folders = [Path(out_dir) / "db2luw" / name for name in (capture, split) if name]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("S*.log"):
            old.unlink()
    writer = LogWriter(folders[0], bo, framing, file_bytes, rng)
    truth = Truth(Path(out_dir) / "truth" / "db2luw")
    w = Workload(writer, truth, rng, bo)
    features = list(FEATURES)
    done = 0
    spanning: dict[str, dict] | None = None
    while done < transactions - 1:
        if split is not None and spanning is None and done >= transactions // 2:
            spanning = _write_cut(w, folders[1])
            done += 1
            continue
        if features and done >= features[0][0] * transactions:
            w.write(features.pop(0)[1](w))
            done += 1
            continue
        first = _random_txn(w, set())
        if rng.random() < 0.3 and done < transactions - 2:
            second = _random_txn(w, set(first.touched))  # disjoint rows: interleavable
            w.write(first, second)
            done += 2
        else:
            w.write(first)
            done += 1
    in_flight = _random_txn(w, set())
    in_flight.ending = "in_flight"
    w.write(in_flight)
    writer.close()
    write_catalog(writer.folder / "catalog", [w.tables[n] for n in sorted(w.created)])
    tables = truth.close(w)
    summary = {
        "capture": capture,
        "byteorder": byteorder,
        "framing": framing,
        "seed": seed,
        "files": writer.files,
        "records": writer.records,
        "record_kinds": dict(sorted(w.counts.items())),
        "transactions": dict(sorted(w.dispositions.items())),
        "changes": dict(sorted(truth.changes.items())),
        "tables": {name: len(t["rows"]) for name, t in sorted(tables.items())},
        "dropped_tables": {name: len(d["rows"]) for name, d in sorted(w.dropped.items())},
    }
    if spanning is not None:
        summary["split"] = {"captures": [capture, split], "open_transactions": spanning}
    (truth.folder / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    return summary


def _write_cut(w: Workload, next_capture: Path) -> dict[str, dict]:
    """Three inserts into ORDERS in one committed transaction, cut after the second: the first
    capture ends there (with its catalog export, the tables as they are then) and the rest of
    the log goes to ``next_capture``. Returns the transaction open at the cut, by TID."""
    txn, orders = w.new_txn(), w.tables["ORDERS"]
    for _ in range(3):
        w.insert(txn, orders)
    records = w._records(txn)
    for _ in range(2):
        next(records)
    write_catalog(w.out.folder / "catalog", [w.tables[n] for n in sorted(w.created)])
    w.out.continue_in(next_capture)
    for _ in records:
        pass
    return {txn.tid.hex(): {"changes": 3, "changes_in_first": 2, "disposition": "committed"}}


BENCHMARK_TABLE = Table("BENCH", "T1", 2, 50, [
    Col("ID", "BIGINT", nullable=False), Col("NAME", "VARCHAR", 30),
    Col("AMOUNT", "DECIMAL", 11, 2), Col("CREATED", "TIMESTAMP", 10, 6),
], key="ID")  # fmt: skip


def generate_benchmark(
    path: Path, records: int, seed: int = 1, *, byteorder: str = "little",
    framing: str = "filter",
) -> dict:  # fmt: skip
    """Stream ``records`` inserts into one simple table (BENCH.T1), a commit every 100, to the
    single file ``path``; writes ``path.parent/catalog``. Holds no rows in memory."""
    bo, rng = _byteorder_code(byteorder), random.Random(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = LogWriter(path.parent, bo, framing, 1 << 62, rng)
    writer.files, writer._handle = [path.name], path.open("wb")
    table = BENCHMARK_TABLE
    tid, stamp = (0x100000).to_bytes(6, "big"), dt.datetime(2024, 1, 1)
    for n in range(records):
        values = {"ID": n + 1, "NAME": f"name {n % 997}",
                  "AMOUNT": Decimal(rng.randint(-10**8, 10**8)).scaleb(-2),
                  "CREATED": stamp + dt.timedelta(seconds=n)}  # fmt: skip
        image = row_image(table, values, 0, bo)
        rid = struct.pack(">IH", n // 100, n % 100)
        writer.write(tid, NORMAL, insert_body(bo, 162, table.ts, table.tid, image, rid))
        if n % 100 == 99 or n == records - 1:
            writer.write(tid, COMMIT, commit_body(bo, START_TIME + n, "BENCH"))
            tid = (int.from_bytes(tid, "big") + 1).to_bytes(6, "big")
    writer.close()
    write_catalog(path.parent / "catalog", [table])
    return {"path": str(path), "records": writer.records, "inserts": records,
            "bytes": path.stat().st_size, "byteorder": byteorder, "framing": framing}  # fmt: skip
